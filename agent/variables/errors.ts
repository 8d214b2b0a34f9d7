/**
 * The named errors of the agent's variables: a refused write (400, naming the field), a key the
 * keyring no longer has, a key file that is not one, and items that do not open with their key.
 * @module
 */
import { BerthError } from '../../index.ts';

/** A variable write Nomad would refuse: `field` names what is wrong (`Path`, `Items`, `Namespace`). */
export class InvalidVariableError extends BerthError {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/**
 * The root key a variable is sealed with is not in the keystore (its `.nks.json` file was
 * removed): the variable cannot be read until the file is put back, or purged.
 */
export class VariableKeyMissingError extends BerthError {
  constructor(
    readonly keyId: string,
    readonly file: string,
    readonly path?: string,
  ) {
    super(
      `${path === undefined ? '' : `variable ${JSON.stringify(path)}: `}root key ${keyId} is not in the keystore (${file} is missing): ` +
        'put the key file back, or purge the variables sealed with it',
    );
  }
}

/** A keystore file that cannot be used: not JSON, another algorithm, a key of the wrong size, another key's id. */
export class KeystoreFileError extends BerthError {
  constructor(
    readonly file: string,
    problem: string,
    options?: { cause?: unknown },
  ) {
    super(`keystore file ${file}: ${problem}`, options);
  }
}

/** Sealed items that do not open: the key is not theirs, or the row was changed (GCM's tag check failed). */
export class VariableDecryptError extends BerthError {
  constructor(
    readonly path: string,
    readonly keyId: string,
  ) {
    super(
      `variable ${JSON.stringify(path)}: its items do not decrypt with root key ${keyId} (the stored row was altered, or the key file is not the original)`,
    );
  }
}

/** A variable source read after the agent's state was closed (the agent is stopping). */
export class VariableSourceClosedError extends BerthError {
  constructor() {
    super('the agent is stopping: its variables can no longer be read');
  }
}
