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

  /** Text replaced in every line (the run's temp dir): a trace must not depend on where it ran. */
  #scrub: Array<[string, string]>;

  constructor(now: () => number, epoch: number, on = true, scrub: Array<[string, string]> = []) {
    this.#now = now;
    this.#epoch = epoch;
    this.on = on;
    this.#scrub = scrub;
  }

  log(line: string | (() => string)): void {
    if (!this.on) return;
    const t = ((this.#now() - this.#epoch) / 1000).toFixed(3).padStart(9, ' ');
    let text = typeof line === 'string' ? line : line();
    for (const [from, to] of this.#scrub) text = text.replaceAll(from, to);
    this.lines.push(`${t} ${text}`);
  }

  text(): string {
    return this.lines.join('\n') + '\n';
  }
}
