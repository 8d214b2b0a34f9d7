/**
 * `berth view <recording>`: replays a recording (`berth run --record FILE`) in berth's own viewer,
 * with a time slider, until Ctrl-C.
 * @module
 */
import { serveRecording, untilInterrupted, viewerPageUrl } from '../../../actors/viewer/open.ts';
import { RecordingFormatError } from '../../../actors/viewer/errors.ts';
import { flagCommand } from '../command.ts';
import { InputError, UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { VIEWER_FLAGS, viewerOptions } from '../viewer-flags.ts';
import { errorText } from '../../../model/error-text.ts';

const HELP = `usage: berth view <recording.jsonl> [--view-host H] [--view-port N] [--token T]

Serves a recording made with berth run --record FILE in berth's viewer (works offline), with a
time slider, until Ctrl-C. Exit codes: 0 after Ctrl-C; 2 usage error or not a recording.`;

export const viewCommand = flagCommand(
  { name: 'view', summary: "replay a recorded run in berth's viewer", help: HELP },
  VIEWER_FLAGS,
  async ({ values, positionals, io }) => {
    if (positionals.length !== 1) throw new UsageError('view needs one recording file (berth run --record FILE)', 'view');
    const file = positionals[0]!;
    const { log, ...opts } = viewerOptions('view', values, (line) => writeLine(io.stdout, line));
    let srv;
    try {
      srv = await serveRecording(file, opts);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (err instanceof RecordingFormatError || code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES')
        throw new InputError(file, `not a recording: ${errorText(err)}`, [], { cause: err });
      throw err;
    }
    log(`viewer: replaying ${file}: open ${viewerPageUrl(srv, opts.token)} (Ctrl-C to stop)`);
    await untilInterrupted();
    await srv.close();
    return 0;
  },
);
