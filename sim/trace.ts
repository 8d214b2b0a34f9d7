/**
 * The simulator's trace: one line per thing that happened, stamped with virtual time. The same
 * seed gives the same trace, byte for byte.
 * @module
 */

/** An append-only trace. */
export class Trace {
  readonly lines: string[] = [];
  #epoch: number;
  #now: () => number;
  /** Lines are kept only when on (building strings costs; the soak turns it off). */
  on: boolean;

  constructor(now: () => number, epoch: number, on = true) {
    this.#now = now;
    this.#epoch = epoch;
    this.on = on;
  }

  log(line: string | (() => string)): void {
    if (!this.on) return;
    const t = ((this.#now() - this.#epoch) / 1000).toFixed(3).padStart(9, ' ');
    this.lines.push(`${t} ${typeof line === 'string' ? line : line()}`);
  }

  text(): string {
    return this.lines.join('\n') + '\n';
  }
}
