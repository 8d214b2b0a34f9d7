/**
 * A {@link VariableSource} held in memory: the far side of the client's boundary (what the
 * agent's encrypted store serves), for library specs. Blocking reads wait on its index, with
 * Nomad's implicit workload access rule; `waiting` shows that no read is left behind.
 */
import { VariableAccessError } from '../../model/errors.ts';
import {
  workloadMayRead,
  type VariableData,
  type VariableMeta,
  type VariableReadOptions,
  type VariableSource,
  type WorkloadIdentity,
} from '../../model/variables.ts';

export class MemoryVariables implements VariableSource {
  readonly #vars = new Map<string, VariableData>();
  #index = 1;
  readonly #waiters = new Set<() => void>();
  /** Reads answered (each blocking read counts once, when it answers). */
  reads = 0;

  get waiting(): number {
    return this.#waiters.size;
  }

  put(path: string, items: Record<string, string>, namespace = 'default'): void {
    const index = ++this.#index;
    const old = this.#vars.get(`${namespace}/${path}`);
    const now = Date.now() * 1e6;
    this.#vars.set(`${namespace}/${path}`, {
      namespace,
      path,
      items: { ...items },
      createIndex: old?.createIndex ?? index,
      modifyIndex: index,
      createTime: old?.createTime ?? now,
      modifyTime: now,
    });
    for (const w of [...this.#waiters]) w();
  }

  delete(path: string, namespace = 'default'): void {
    this.#index++;
    this.#vars.delete(`${namespace}/${path}`);
    for (const w of [...this.#waiters]) w();
  }

  async #wait(minIndex: number | undefined, signal: AbortSignal | undefined): Promise<void> {
    if (!minIndex || this.#index > minIndex) return;
    if (signal?.aborted) throw signal.reason;
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        if (this.#index <= minIndex) return;
        done();
        resolve();
      };
      const abort = () => {
        done();
        reject(signal!.reason);
      };
      const done = () => {
        this.#waiters.delete(wake);
        signal?.removeEventListener('abort', abort);
      };
      this.#waiters.add(wake);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }

  async get(path: string, who: WorkloadIdentity, opts: VariableReadOptions = {}) {
    if (!workloadMayRead(path, who)) throw new VariableAccessError(path);
    await this.#wait(opts.minIndex, opts.signal);
    this.reads++;
    const v = this.#vars.get(`${who.namespace}/${path}`);
    return { index: this.#index, variable: v ? { ...v, items: { ...v.items } } : undefined };
  }

  async list(prefix: string, who: WorkloadIdentity, opts: VariableReadOptions = {}) {
    await this.#wait(opts.minIndex, opts.signal);
    this.reads++;
    const variables: VariableMeta[] = [...this.#vars.values()]
      .filter((v) => v.namespace === who.namespace && v.path.startsWith(prefix) && workloadMayRead(v.path, who))
      .sort((a, b) => (a.path < b.path ? -1 : 1))
      .map(({ items: _items, ...meta }) => meta);
    return { index: this.#index, variables };
  }
}
