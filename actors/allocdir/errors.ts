/**
 * Errors specific to alloc and task directories. The shared ones (AllocDirNotBuiltError,
 * SnapshotEscapeError, SnapshotRemoteError, MultiError) live in `model/errors.ts`.
 * @module
 */
import { BerthError } from '../../model/errors.ts';

/** A mount or unmount failed. `code` is the errno name (`EINVAL`, `EBUSY`, ...) when known. */
export class MountError extends BerthError {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly target: string,
  ) {
    super(message);
  }
}

/** Building a chroot failed (unreadable source, a destination escaping the task dir, ...). */
export class ChrootError extends BerthError {}

/** A task dir was built while its alloc dir was not built (or already destroyed). */
export class TaskDirBuildError extends BerthError {}

/** A snapshot could not be written, or a snapshot stream could not be read. */
export class SnapshotStreamError extends BerthError {}

/** Moving a previous allocation's data into this one failed. */
export class AllocDirMoveError extends BerthError {}
