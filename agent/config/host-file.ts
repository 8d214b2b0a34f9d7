/**
 * One file of this host read as text (`/etc/os-release`, `/proc/cpuinfo`, `/proc/net/tcp`): what
 * the fingerprinters parse. A file this system does not have (not Linux, a minimal image) is an
 * empty text, so the fact it holds is unknown rather than an error.
 * @module
 */
import { readFileSync } from 'node:fs';

/** `path`'s text, or `''` when it cannot be read. */
export function readHostFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
