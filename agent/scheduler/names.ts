/**
 * Alloc names `<job>.<group>[<index>]` and Nomad's name index: new allocs take the lowest free
 * index below the group's count; a count down stops the highest indexes first.
 * @module
 */

/** Nomad's alloc name. */
export function allocName(jobId: string, group: string, index: number): string {
  return `${jobId}.${group}[${index}]`;
}

/** The index in an alloc name (`NOMAD_ALLOC_INDEX`), or undefined for a name without one. */
export function allocIndexOf(name: string | undefined): number | undefined {
  const m = name ? /\[(\d+)\]$/.exec(name) : null;
  return m ? Number(m[1]) : undefined;
}

/** Which indexes of one group are in use (Nomad's `AllocNameIndex`). */
export class NameIndex {
  private readonly used = new Set<number>();
  private readonly duplicates = new Map<number, number>();
  private readonly size: number;
  /** No index below this is free (names taken one by one do not rescan from 0). */
  private cursor = 0;

  /** `names` are the names of the allocs that keep (or are about to take) an index. */
  constructor(
    private readonly jobId: string,
    private readonly group: string,
    private readonly count: number,
    names: (string | undefined)[],
  ) {
    let max = 0;
    for (const name of names) {
      const i = allocIndexOf(name) ?? 0;
      max = Math.max(max, i);
      if (this.used.has(i)) this.duplicates.set(i, (this.duplicates.get(i) ?? 0) + 1);
      else this.used.add(i);
    }
    this.size = Math.max(max + 1, count, names.length);
  }

  /** Release and return the `n` highest indexes in use, as names. */
  highest(n: number): Set<string> {
    const out = new Set<string>();
    for (let i = this.size - 1; i >= 0 && out.size < n; i--) {
      if (this.used.delete(i)) out.add(allocName(this.jobId, this.group, i));
    }
    this.cursor = 0;
    return out;
  }

  /** Take `n` names: free indexes below the count first, lowest first. */
  next(n: number): string[] {
    const out: string[] = [];
    for (let i = this.cursor; i < this.count && out.length < n; i++) {
      this.cursor = i + 1;
      if (!this.used.has(i)) {
        this.used.add(i);
        out.push(allocName(this.jobId, this.group, i));
      }
    }
    // Nomad fills any remainder from 0 again (only reachable when more than count is asked for).
    for (let i = 0; out.length < n; i++) {
      this.used.add(i);
      out.push(allocName(this.jobId, this.group, i));
    }
    return out;
  }

  /** Give one holder's claim on an index back. */
  unset(index: number): void {
    const d = this.duplicates.get(index);
    if (d !== undefined) {
      if (d <= 1) this.duplicates.delete(index);
      else this.duplicates.set(index, d - 1);
    } else this.used.delete(index);
    this.cursor = 0;
  }
}
