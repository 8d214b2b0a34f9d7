/**
 * The simulator's one seeded random source: a small, fast PRNG (sfc32) and keyed forks of it, so
 * each entity (a process, a driver call) draws from its own stream. Removing an operation while
 * shrinking then leaves the other entities' draws as they were.
 * @module
 */

/** FNV-1a over a string, mixed with a seed: a 32-bit key for a forked stream. */
function hash(seed: number, key: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** A seeded random stream. */
export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;
  readonly seed: number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.#a = 0x9e3779b9;
    this.#b = 0x243f6a88;
    this.#c = 0xb7e15162;
    this.#d = this.seed;
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Uniform [0, 1). */
  next(): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0;
    this.#d = (this.#d + 1) | 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) | 0;
    this.#c = (this.#c << 21) | (this.#c >>> 11);
    this.#c = (this.#c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty list. */
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }

  /** An independent stream for `key`, derived from this stream's seed only. */
  fork(key: string): Rng {
    return new Rng(hash(this.seed, key));
  }
}
