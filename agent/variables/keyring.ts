/**
 * The agent's root keys, as a Nomad server's keyring: each key a file of its own,
 * `<data_dir>/server/keystore/<keyId>.nks.json` (the directory 0700, the file 0600), holding
 * `{KeyID, Algorithm: "aes256-gcm", CreateTime, Key}` with the 32-byte key in base64; which key
 * is active, and when each was made, is kept in the state's meta (`keyring`). The first start
 * makes a key; a rotation makes the next one active and leaves the others readable.
 *
 * Keys are read from their files once and kept in memory. A key whose file is gone is a
 * {@link VariableKeyMissingError} for the variables sealed with it, never a crash; when the
 * active key's file is gone at start, a new key becomes active (so writes go on) and the lost
 * one stays listed, inactive.
 * @module
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentState, Txn } from '../state/store.ts';
import { KEY_BYTES } from './crypto.ts';
import { KeystoreFileError, VariableKeyMissingError } from './errors.ts';

/** The one algorithm berth's keyring uses (Nomad's name). */
export const KEY_ALGORITHM = 'aes256-gcm';

/** Where the keyring's states live in the state's meta. */
export const KEYRING_META = 'keyring';

/** A root key's metadata (Nomad's `RootKeyMeta`); times in nanoseconds since the epoch. */
export interface RootKeyMeta {
  keyId: string;
  algorithm: typeof KEY_ALGORITHM;
  createTime: number;
  createIndex: number;
  modifyIndex: number;
  state: 'active' | 'inactive';
}

/** A key and its id. */
export interface RootKey {
  keyId: string;
  key: Buffer;
}

/** A key just made, with its creation time (ns). */
export interface NewRootKey extends RootKey {
  createTime: number;
}

/** The keystore directory of a data dir. */
export const keystoreDir = (dataDir: string): string => join(dataDir, 'server', 'keystore');

/** A key id is a UUID: checked before it names a file (a row's key id comes from the database). */
const KEY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Writes `text` to `file` (mode 0600) through a temp file, synced, then renamed into place. */
function writeSecretFile(dir: string, file: string, text: string): void {
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  const dfd = openSync(dir, 'r');
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
}

/** The agent's keyring over its keystore directory and its state. */
export class Keyring {
  readonly #keys = new Map<string, Buffer>();

  private constructor(
    readonly dir: string,
    readonly state: AgentState,
  ) {}

  /**
   * Opens the keystore at `dir` (made 0700 if missing), making and activating a key when there is
   * no active key, or when the active key's file is gone (logged).
   * @throws KeystoreFileError when the active key's file is there but is not a key file.
   */
  static open(dir: string, state: AgentState, log: (line: string) => void): Keyring {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const ring = new Keyring(dir, state);
    const active = ring.list().find((k) => k.state === 'active');
    if (active) {
      try {
        ring.key(active.keyId);
        return ring;
      } catch (e) {
        if (!(e instanceof VariableKeyMissingError)) throw e;
        log(`keyring: ${e.message}; a new root key becomes active`);
      }
    }
    const fresh = ring.create();
    state.commit((txn) => ring.activate(txn, fresh));
    log(`keyring: root key ${fresh.keyId} is active (${ring.file(fresh.keyId)})`);
    return ring;
  }

  /** The file of key `keyId`. */
  file(keyId: string): string {
    return join(this.dir, `${keyId}.nks.json`);
  }

  /** Every key the keyring knows, oldest first. */
  list(): RootKeyMeta[] {
    return [...((this.state.meta.get(KEYRING_META) as RootKeyMeta[] | undefined) ?? [])].sort((a, b) => a.createTime - b.createTime);
  }

  /** The active key (what new writes are sealed with). */
  active(): RootKey {
    const meta = this.list().find((k) => k.state === 'active');
    if (!meta) throw new VariableKeyMissingError('(none)', this.dir);
    return { keyId: meta.keyId, key: this.key(meta.keyId) };
  }

  /**
   * Key `keyId`, from memory or its file; `path` names the variable that needs it, for the error.
   * @throws VariableKeyMissingError when its file is gone; KeystoreFileError when the file is no key file.
   */
  key(keyId: string, path?: string): Buffer {
    const kept = this.#keys.get(keyId);
    if (kept) return kept;
    if (!KEY_ID.test(keyId)) throw new KeystoreFileError(JSON.stringify(keyId), 'a key id is a UUID');
    const file = this.file(keyId);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new VariableKeyMissingError(keyId, file, path);
      throw new KeystoreFileError(file, `cannot be read: ${(e as Error).message}`, { cause: e });
    }
    const key = parseKeyFile(file, keyId, text);
    this.#keys.set(keyId, key);
    return key;
  }

  /** Makes a new key and writes its file (it joins the keyring with {@link Keyring.activate}). */
  create(): NewRootKey {
    const keyId = randomUUID();
    const key = randomBytes(KEY_BYTES);
    const createTime = Date.now() * 1e6;
    const body = { KeyID: keyId, Algorithm: KEY_ALGORITHM, CreateTime: createTime, Key: key.toString('base64') };
    writeSecretFile(this.dir, this.file(keyId), `${JSON.stringify(body, null, 2)}\n`);
    this.#keys.set(keyId, key);
    return { keyId, key, createTime };
  }

  /** In `txn`: `fresh` (made by {@link Keyring.create}) becomes the active key, every other inactive. */
  activate(txn: Txn, fresh: NewRootKey): RootKeyMeta {
    const list = this.list().map((k) => (k.state === 'active' ? { ...k, state: 'inactive' as const, modifyIndex: txn.index } : k));
    const meta: RootKeyMeta = {
      keyId: fresh.keyId,
      algorithm: KEY_ALGORITHM,
      createTime: fresh.createTime,
      createIndex: txn.index,
      modifyIndex: txn.index,
      state: 'active',
    };
    txn.putMeta(KEYRING_META, [...list, meta]);
    return meta;
  }
}

/** The key a keystore file holds, checked: JSON, its own id, `aes256-gcm`, 32 bytes of base64. */
function parseKeyFile(file: string, keyId: string, text: string): Buffer {
  let body: { KeyID?: unknown; Algorithm?: unknown; Key?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch (e) {
    throw new KeystoreFileError(file, 'is not JSON', { cause: e });
  }
  if (body?.KeyID !== keyId) throw new KeystoreFileError(file, `holds key ${JSON.stringify(body?.KeyID)}, not ${keyId}`);
  if (body.Algorithm !== KEY_ALGORITHM) throw new KeystoreFileError(file, `Algorithm is ${JSON.stringify(body.Algorithm)}, not "${KEY_ALGORITHM}"`);
  const key = typeof body.Key === 'string' ? Buffer.from(body.Key, 'base64') : Buffer.alloc(0);
  if (key.length !== KEY_BYTES) throw new KeystoreFileError(file, `Key is not ${KEY_BYTES} bytes of base64`);
  return key;
}
