/**
 * Comparing a secret a peer sent with the one expected, in constant time.
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * True when `given` equals `want`. Both are hashed to 32 bytes first, so the time taken shows
 * neither the expected secret's content nor its length (a bare `timingSafeEqual` needs equal
 * lengths, and checking them first answers faster for a wrong length).
 */
export function secretMatches(given: string, want: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(want).digest();
  return timingSafeEqual(a, b);
}
