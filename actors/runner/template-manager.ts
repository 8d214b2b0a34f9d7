/**
 * One task's template manager (Nomad's TaskTemplateManager): it renders the task's templates
 * in prestart, fetching what they read and waiting, with Nomad's "Missing: ..." event, while a
 * variable they need does not exist yet; then, while the task runs, it watches every dependency
 * of the last render with blocking queries, honours each template's `wait`, re-renders, writes
 * what changed and says which templates changed, for the task chart to restart, signal or run a
 * script. It lives as long as its alloc runner, so a restart keeps what it rendered.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { sleep, type Clock } from '../../model/clock.ts';
import { BerthError } from '../../model/errors.ts';
import type { Task, TaskEvent, TaskTemplate } from '../../model/types.ts';
import type { WorkloadIdentity } from '../../model/variables.ts';
import { taskEvent } from '../../machines/policy/task-events.ts';
import { depKey, depName, type DepValue, type TemplateDep } from '../templates/nomad-funcs.ts';
import { fetchDep, type TemplateData } from './template-data.ts';
import { parseEnvFile, renderedExists, renderTemplate, writeRendered, type RenderContext } from './render-templates.ts';

/** What a manager needs besides its task. */
export interface TemplateManagerDeps {
  data: TemplateData;
  who: WorkloadIdentity;
  region: string;
  clock: Clock;
  /** The least time between two "Missing: ..." events. */
  eventRateMs: number;
  /** Functions no template may call. */
  denylist: readonly string[];
  /** `file` and `source` may read outside the task dir. */
  noSandbox: boolean;
  /** Appends an event to the task while a render waits. */
  emit(ev: TaskEvent): void;
}

interface Cached {
  dep: TemplateDep;
  index: number;
  value: DepValue;
}

interface Pass {
  /** Each template's output; undefined while something it reads is missing. */
  outputs: Array<string | undefined>;
  used: Map<string, TemplateDep>[];
  missing: Map<string, TemplateDep>;
}

/** Nomad's "Missing: a, b, c, and N more" (sorted, three named). */
export function missingMessage(names: string[]): string {
  const sorted = [...names].sort();
  const shown = sorted.length > 3 ? [...sorted.slice(0, 3), `and ${sorted.length - 3} more`] : sorted;
  return `Missing: ${shown.join(', ')}`;
}

/** See the module doc. */
export class TaskTemplateManager {
  readonly #cache = new Map<string, Cached>();
  /** What each template last wrote (by its position in the task). */
  readonly #written: Array<string | undefined> = [];
  #used: Map<string, TemplateDep>[] = [];
  #ctx: RenderContext | undefined;
  #lastMissing = { text: '', at: -Infinity };
  /** The variables of the `env = true` templates, as last rendered. */
  env: Record<string, string> = {};

  constructor(
    readonly task: Task,
    private readonly deps: TemplateManagerDeps,
  ) {}

  get #templates(): TaskTemplate[] {
    return this.task.templates ?? [];
  }

  /** Whether a first render has completed (a restart without `render_templates` need not force one). */
  get rendered(): boolean {
    return this.#ctx !== undefined;
  }

  /**
   * Renders every template, fetching what they read at once and waiting (cancellable by `signal`)
   * while something they need is missing. A file is written when its output differs from what
   * the manager last wrote, or always with `force` (Nomad's `render_templates` on a restart).
   */
  async render(ctx: RenderContext, signal: AbortSignal, opts: { force?: boolean } = {}): Promise<void> {
    // Fresh data for this render: what changed while the task was not running is seen now.
    this.#cache.clear();
    for (;;) {
      const pass = await this.#pass(ctx);
      const unfetched = [...new Map(pass.used.flatMap((m) => [...m])).values()].filter((d) => !this.#cache.has(depKey(d)));
      if (unfetched.length) {
        await Promise.all(unfetched.map((d) => this.#fetch(d, 0, signal)));
        continue;
      }
      if (pass.missing.size === 0) {
        await this.#write(ctx, pass, opts.force ?? false);
        this.#ctx = ctx;
        return;
      }
      this.#emitMissing([...pass.missing.values()]);
      await this.#anyChange([...pass.missing.values()], signal);
    }
  }

  /**
   * While the task runs: waits for a dependency of the last render to change, lets the
   * templates' `wait` pass, re-renders, writes what changed, and resolves with the templates
   * whose file changed (never empty). Rejects when `signal` aborts.
   */
  async nextChange(signal: AbortSignal): Promise<TaskTemplate[]> {
    const ctx = this.#ctx;
    if (!ctx) throw new BerthError('nextChange before a first render');
    for (;;) {
      const watched = this.#templates.flatMap((t, i) => (t.once ? [] : [...(this.#used[i]?.values() ?? [])]));
      const deps = [...new Map(watched.map((d) => [depKey(d), d])).values()];
      if (!deps.length) await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      await this.#anyChange(deps, signal);
      await this.#quiesce(deps, signal);
      const pass = await this.#pass(ctx);
      const changed = await this.#write(ctx, pass, false, true);
      if (changed.length) return changed;
    }
  }

  /** One render of every template over the cache; nothing waits. */
  async #pass(ctx: RenderContext): Promise<Pass> {
    const pass: Pass = { outputs: [], used: [], missing: new Map() };
    for (const t of this.#templates) {
      const used = new Map<string, TemplateDep>();
      const missing = new Map<string, TemplateDep>();
      const reader = {
        read: (dep: TemplateDep) => {
          used.set(depKey(dep), dep);
          const c = this.#cache.get(depKey(dep));
          return c ? ({ fetched: true, value: c.value } as const) : ({ fetched: false } as const);
        },
        missing: (dep: TemplateDep) => void missing.set(depKey(dep), dep),
      };
      let out: string | undefined;
      try {
        out = await renderTemplate(t, { ...ctx, env: { ...ctx.env, ...this.env } }, reader, this.deps);
      } catch (e) {
        // An error while data is missing may come of the missing data (a field of an absent
        // variable): the render is only incomplete. With everything there, it is the template's.
        if (!missing.size) throw e;
      }
      pass.used.push(used);
      pass.outputs.push(missing.size ? undefined : out);
      for (const [k, d] of missing) pass.missing.set(k, d);
    }
    return pass;
  }

  /** Writes the complete outputs that changed; returns their templates. */
  async #write(ctx: RenderContext, pass: Pass, force: boolean, keepOnce = false): Promise<TaskTemplate[]> {
    const changed: TaskTemplate[] = [];
    const env: Record<string, string> = {};
    for (const [i, t] of this.#templates.entries()) {
      const out = pass.outputs[i];
      // A once template, or one whose data went missing again, keeps what it wrote.
      if (out !== undefined && !(keepOnce && t.once)) {
        this.#used[i] = pass.used[i]!;
        if (force || out !== this.#written[i] || !(await renderedExists(t, ctx))) {
          await writeRendered(t, ctx, out);
          if (this.#written[i] !== undefined && out !== this.#written[i]) changed.push(t);
          this.#written[i] = out;
        }
      }
      if (t.env && this.#written[i] !== undefined) Object.assign(env, parseEnvFile(this.#written[i]!));
    }
    this.env = env;
    return changed;
  }

  async #fetch(dep: TemplateDep, minIndex: number, signal: AbortSignal): Promise<boolean> {
    const r = await fetchDep(this.deps.data, dep, this.deps.who, minIndex, signal);
    const old = this.#cache.get(depKey(dep));
    this.#cache.set(depKey(dep), { dep, index: r.index, value: r.value });
    return !old || !isDeepStrictEqual(old.value, r.value);
  }

  /** Waits until one of `deps` has a new value (an index moving with the same value waits on). */
  async #anyChange(deps: TemplateDep[], signal: AbortSignal): Promise<void> {
    const round = new AbortController();
    const both = AbortSignal.any([signal, round.signal]);
    try {
      await new Promise<void>((resolve, reject) => {
        for (const d of deps) {
          const loop = async (): Promise<void> => {
            for (;;) {
              const index = this.#cache.get(depKey(d))?.index ?? 0;
              if (await this.#fetch(d, index, both)) return resolve();
            }
          };
          loop().catch((e) => (both.aborted && !signal.aborted ? undefined : reject(e)));
        }
      });
    } finally {
      round.abort();
    }
  }

  /** The templates' `wait`: more changes within `min` wait on, never past `max` (Nomad's default max is 4 x min). */
  async #quiesce(deps: TemplateDep[], signal: AbortSignal): Promise<void> {
    const minMs = Math.max(0, ...this.#templates.map((t) => t.wait?.minMs ?? 0));
    if (minMs === 0) return;
    const maxMs = Math.max(minMs, ...this.#templates.map((t) => t.wait?.maxMs ?? minMs * 4));
    const start = this.deps.clock.now();
    while (this.deps.clock.now() - start < maxMs) {
      const round = new AbortController();
      const both = AbortSignal.any([signal, round.signal]);
      const left = Math.min(minMs, maxMs - (this.deps.clock.now() - start));
      try {
        const quiet = await Promise.race([sleep(left, both, this.deps.clock).then(() => true), this.#anyChange(deps, both).then(() => false)]);
        if (quiet) return;
      } finally {
        round.abort();
      }
    }
  }

  #emitMissing(deps: TemplateDep[]): void {
    const text = missingMessage(deps.map((d) => depName(d, this.deps.region)));
    const now = this.deps.clock.now();
    if (text === this.#lastMissing.text || now - this.#lastMissing.at < this.deps.eventRateMs) return;
    this.#lastMissing = { text, at: now };
    this.deps.emit(taskEvent('Template', now, { displayMessage: text, message: text }));
  }
}
