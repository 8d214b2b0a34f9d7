/**
 * The client's Nomad-native service catalog: what `client.services()` returns. Group and task
 * services are put here while they run and taken out before their task (or alloc) is killed;
 * each registration carries its checks' latest status. Indexes grow with every change, as
 * Nomad's `CreateIndex` / `ModifyIndex` do.
 * @module
 */
import type { CheckResult, ServiceRegistration } from '../../model/types.ts';
import type { CheckStatus } from '../../machines/policy/check-status.ts';

/** The latest result of one check of a registration. */
export interface CatalogCheck {
  name: string;
  status: CheckStatus;
  output: string;
  /** When the status was last set, ms since the epoch. */
  timestamp: number;
  /** The status is the initial one: the check has not run yet. */
  pending?: boolean;
  /** An HTTP check's answer status. */
  statusCode?: number;
  /** The task the check runs for (a task service's, or a script check's own). */
  task?: string;
}

/** A registration as the catalog holds it: the public entry, its task, its checks. */
export interface CatalogEntry {
  registration: ServiceRegistration;
  /** The task the service belongs to (undefined for a group service). */
  task?: string;
  checks: Map<string, CatalogCheck>;
}

/** See the module doc. One per client. */
export class ServiceCatalog {
  readonly #entries = new Map<string, CatalogEntry>();
  #index = 0;
  /** Readers waiting for the index to move (templates' `nomadService`). */
  readonly #waiters = new Set<() => void>();

  /**
   * Resolves with the index once it is above `minIndex` (at once when it already is), as a
   * blocking query; rejects with the signal's reason when `signal` aborts, leaving no waiter.
   */
  waitFor(minIndex: number, signal?: AbortSignal): Promise<number> {
    if (minIndex <= 0 || this.#index > minIndex) return Promise.resolve(this.#index);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const wake = () => {
        if (this.#index <= minIndex) return;
        done();
        resolve(this.#index);
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

  /** How many readers wait now (for specs: none is left behind). */
  get waiting(): number {
    return this.#waiters.size;
  }

  #changed(): void {
    for (const w of [...this.#waiters]) w();
  }

  /** Adds (or replaces) a registration. */
  register(reg: Omit<ServiceRegistration, 'createIndex' | 'modifyIndex'>, task?: string): void {
    const old = this.#entries.get(reg.id);
    const index = ++this.#index;
    this.#entries.set(reg.id, {
      registration: { ...reg, createIndex: old?.registration.createIndex ?? index, modifyIndex: index },
      ...(task ? { task } : {}),
      checks: old?.checks ?? new Map(),
    });
    this.#changed();
  }

  /** Removes a registration; no-op when it is not there. */
  deregister(id: string): void {
    if (this.#entries.delete(id)) {
      this.#index++;
      this.#changed();
    }
  }

  /** Sets a check's latest status on its registration (ignored once deregistered). */
  setCheck(id: string, check: CatalogCheck): void {
    const e = this.#entries.get(id);
    if (!e) return;
    e.checks.set(check.name, check);
    e.registration = { ...e.registration, modifyIndex: ++this.#index };
  }

  /** Every registration, by service name then id (copies). */
  list(): ServiceRegistration[] {
    return [...this.#entries.values()]
      .map((e) => ({ ...e.registration, tags: [...e.registration.tags] }))
      .sort((a, b) => a.serviceName.localeCompare(b.serviceName) || a.id.localeCompare(b.id));
  }

  /** The entries of one alloc (for its health tracker). */
  entriesOf(allocId: string): CatalogEntry[] {
    return [...this.#entries.values()].filter((e) => e.registration.allocId === allocId);
  }

  /** The latest result of each check of one alloc's services, by service then check name. */
  checksOf(allocId: string, group: string): CheckResult[] {
    return this.entriesOf(allocId)
      .flatMap((e) =>
        [...e.checks.values()].map((c) => {
          const task = c.task ?? e.task;
          return {
            allocId,
            group,
            ...(task ? { task } : {}),
            service: e.registration.serviceName,
            check: c.name,
            status: c.status,
            pending: c.pending === true,
            output: c.output,
            ...(c.statusCode !== undefined ? { statusCode: c.statusCode } : {}),
            timestamp: c.timestamp,
          };
        }),
      )
      .sort((a, b) => a.service.localeCompare(b.service) || a.check.localeCompare(b.check));
  }

  /** The catalog's current index. */
  get index(): number {
    return this.#index;
  }
}
