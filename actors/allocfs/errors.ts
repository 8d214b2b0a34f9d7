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
