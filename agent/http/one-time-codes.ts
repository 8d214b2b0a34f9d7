/**
 * One-time codes for `/ui`: what the redirect to berth's viewer carries instead of a token. A
 * code is random (128 bits), good once, and for {@link ONE_TIME_CODE_TTL_MS} only; the viewer
 * takes it for its own session cookie. Nomad's one-time tokens (`nomad ui -authenticate`) live 10
 * minutes because a person copies the URL; here a browser follows a redirect at once, so a minute
 * is plenty. At most {@link MAX_ONE_TIME_CODES} are outstanding (the oldest goes first), so a
 * caller asking for codes in a loop holds a bounded set.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { secretMatches } from '../../index.ts';

/** How long a code may wait to be used. */
export const ONE_TIME_CODE_TTL_MS = 60_000;
/** Codes outstanding at most. */
export const MAX_ONE_TIME_CODES = 64;

/** Issues and redeems one-time codes. */
export class OneTimeCodes {
  /** code → when it expires (insertion order: oldest first). */
  readonly #codes = new Map<string, number>();
  readonly #now: () => number;

  /** `now` is the clock (specs pass their own). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A fresh code. */
  issue(): string {
    this.#sweep();
    if (this.#codes.size >= MAX_ONE_TIME_CODES) this.#codes.delete(this.#codes.keys().next().value!);
    const code = randomBytes(16).toString('base64url');
    this.#codes.set(code, this.#now() + ONE_TIME_CODE_TTL_MS);
    return code;
  }

  /** True, once, for a code issued here and not yet expired (it is spent then). */
  redeem(given: string): boolean {
    this.#sweep();
    for (const code of this.#codes.keys()) {
      if (secretMatches(given, code)) {
        this.#codes.delete(code);
        return true;
      }
    }
    return false;
  }

  /** Codes outstanding now (expired ones not counted). */
  get size(): number {
    this.#sweep();
    return this.#codes.size;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [code, expires] of this.#codes) if (expires <= now) this.#codes.delete(code);
  }
}
