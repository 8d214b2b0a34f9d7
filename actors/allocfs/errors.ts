/**
 * Errors of the alloc filesystem API (`runner.fs`).
 * @module
 */
import { BerthError } from '../../model/errors.ts';

/** Base of every alloc-fs error; `code` is the errno name when the filesystem said no. */
export class AllocFSError extends BerthError {
  constructor(
    message: string,
    readonly code?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The path leads out of the alloc dir, lexically (`..`) or through a symlink (Nomad's message). */
export class AllocPathEscapeError extends AllocFSError {
  constructor() {
    super('Path escapes the alloc directory');
  }
}

/** A read of a task's `secrets/` (Nomad's "Reading secret file prohibited: <path>"). */
export class SecretFileReadError extends AllocFSError {
  constructor(readonly path: string) {
    super(`Reading secret file prohibited: ${path}`);
  }
}

/** A read of a task's `private/` (Nomad's "Reading private file prohibited: <path>"). */
export class PrivateFileReadError extends AllocFSError {
  constructor(readonly path: string) {
    super(`Reading private file prohibited: ${path}`);
  }
}

/** Nothing at that path (ENOENT), or a parent is not a directory (ENOTDIR). */
export class AllocFileNotFoundError extends AllocFSError {
  constructor(
    readonly path: string,
    code = 'ENOENT',
  ) {
    super(`no such file or directory in the alloc dir: ${path}`, code);
  }
}

/** An offset or limit that is not a non-negative integer. */
export class AllocFSArgumentError extends AllocFSError {}

/**
 * Not a regular file or directory (a FIFO, unix socket or device a task made): never opened, since
 * opening one can block a host thread until a writer appears. `list` and `stat` still show it.
 */
export class AllocFileTypeError extends AllocFSError {
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is a ${kind}: the alloc fs reads only regular files`, 'EFTYPE');
  }
}

/** A symlink chain that never ends (ELOOP): more links than the kernel follows in one path. */
export class AllocSymlinkLoopError extends AllocFSError {
  constructor(readonly path: string) {
    super(`${path}: too many levels of symbolic links`, 'ELOOP');
  }
}

/**
 * A host file the task's user could not read, hard-linked into the alloc dir (a chroot built
 * before berth left such files out): owned by root, several links, no read bit for others.
 */
export class AllocFileUnreadableError extends AllocFSError {
  constructor(readonly path: string) {
    super(`${path} is a host file only root may read: the alloc fs does not serve it`, 'EACCES');
  }
}
