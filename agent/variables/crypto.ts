/**
 * Sealing a variable's items: AES-256-GCM (`node:crypto`) over their JSON, a fresh random 12-byte
 * nonce for every write, the 16-byte tag kept, and the namespace and path as additional
 * authenticated data, so a sealed row moved to another path (or namespace) no longer opens.
 * @module
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SealedItems } from '../state/types.ts';
import { VariableDecryptError } from './errors.ts';

/** The cipher, in `node:crypto`'s name. */
const CIPHER = 'aes-256-gcm';
/** GCM's recommended nonce size. */
export const NONCE_BYTES = 12;
/** An AES-256 key. */
export const KEY_BYTES = 32;

/** Where the items live: bound to the ciphertext as additional data. */
export interface VariableAddress {
  namespace: string;
  path: string;
}

/** The additional data: namespace and path, unambiguous (JSON of the pair). */
const aad = (at: VariableAddress) => Buffer.from(JSON.stringify([at.namespace, at.path]), 'utf8');

/** Seals `items` with `key` (whose id is `keyId`) for the variable at `at`. */
export function sealItems(key: Buffer, keyId: string, at: VariableAddress, items: Record<string, string>): SealedItems {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(CIPHER, key, nonce);
  cipher.setAAD(aad(at));
  const data = Buffer.concat([cipher.update(JSON.stringify(items), 'utf8'), cipher.final()]);
  return { keyId, nonce: nonce.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

/**
 * The items `sealed` holds, opened with `key`.
 * @throws VariableDecryptError when the tag does not check (another key, another address, an altered row).
 */
export function openItems(key: Buffer, sealed: SealedItems, at: VariableAddress): Record<string, string> {
  try {
    const decipher = createDecipheriv(CIPHER, key, Buffer.from(sealed.nonce, 'base64'));
    decipher.setAAD(aad(at));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const text = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
    return JSON.parse(text) as Record<string, string>;
  } catch {
    throw new VariableDecryptError(at.path, sealed.keyId);
  }
}
