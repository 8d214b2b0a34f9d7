/**
 * The viewer's named errors.
 * @module
 */
import { BerthError } from '../../model/errors.ts';

/** `serveViewer` / `serveRecording` options that cannot work (bad port, empty token, ...). */
export class InvalidViewerOptionsError extends BerthError {}

/** A recording file that is not a berth recording, or is damaged at `line`. */
export class RecordingFormatError extends BerthError {
  constructor(
    readonly file: string,
    readonly line: number,
    problem: string,
  ) {
    super(`${file}:${line}: not a berth recording: ${problem}`);
  }
}
