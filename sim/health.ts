/**
 * Service checks and alloc health in the simulator (which allocs get them and the `health` ops
 * that flip a check are generated in ops.ts): the group fields they become, and invariant I8, checked from the bus against the task events and check results as they
 * happened: an alloc is reported healthy only if every main task ran for min_healthy_time, and
 * every check passed for min_healthy_time, right up to the verdict.
 * @module
 */
import type { Subscription } from 'rxjs';
import type { Bus } from '../bus/bus.ts';
import type { Service, TaskGroup } from '../model/types.ts';
import { DEFAULT_MIGRATE_HEALTH } from '../machines/policy/alloc-health.ts';
import type { Checker } from './invariants.ts';
import { aliasOf, type AllocSpec } from './ops.ts';

/** The group fields of an alloc with health settings: a deployment's update block, the web task's service. */
export function healthGroupFields(spec: AllocSpec): { update?: TaskGroup['update']; webServices?: Service[] } {
  const h = spec.health;
  if (!h) return {};
  return {
    update: {
      maxParallel: 1,
      healthCheck: 'checks',
      minHealthyTimeMs: h.minHealthyMs,
      healthyDeadlineMs: h.deadlineMs,
      progressDeadlineMs: 600_000,
      autoRevert: false,
      autoPromote: false,
      canary: 0,
      staggerMs: 0,
    },
    webServices: [
      {
        name: 'web',
        checks: [
          {
            name: 'alive',
            type: 'script',
            command: '/bin/check',
            intervalMs: h.checkIntervalMs,
            timeoutMs: 500,
            ...(h.restartLimit ? { checkRestart: { limit: h.restartLimit, graceMs: 0, ignoreWarnings: false } } : {}),
          },
        ],
      },
    ],
  };
}

/** I8, from one host's bus (a new host subscribes again; what it learnt is kept). */
export class HealthInvariant {
  /** `<alloc>/<task>` → when its current run started (absent: not running). */
  readonly #runningSince = new Map<string, number>();
  /** `<alloc>/<check>` → since when it passes (absent: not passing now). */
  readonly #passingSince = new Map<string, number>();

  constructor(
    private readonly checker: Checker,
    private readonly now: () => number,
    private readonly specOf: (allocId: string) => AllocSpec | undefined,
  ) {}

  attach(bus: Bus): Subscription[] {
    return [
      bus.of('task.event').subscribe((m) => {
        const k = `${m.allocId}/${m.task}`;
        if (m.event.type === 'Started') this.#runningSince.set(k, m.event.time);
        else if (m.event.type === 'Terminated' || m.event.type === 'Killed' || m.event.type === 'Driver Failure') this.#runningSince.delete(k);
      }),
      bus.of('check.status').subscribe((m) => {
        const k = `${m.allocId}/${m.check}`;
        if (m.status !== 'passing') this.#passingSince.delete(k);
        else if (!this.#passingSince.has(k)) this.#passingSince.set(k, this.now());
      }),
      bus.of('alloc.health').subscribe((m) => {
        if (m.healthy) this.#healthy(m.allocId);
      }),
    ];
  }

  #healthy(allocId: string): void {
    const spec = this.specOf(allocId);
    if (!spec) return this.checker.fail('I8', `${aliasOf(allocId)}: reported healthy, but it is not a simulated alloc`, allocId);
    if (spec.type !== 'service') return this.checker.fail('I8', `${aliasOf(allocId)}: a ${spec.type} alloc reported healthy`, allocId);
    // A job alloc in a deployment: its update block's; without a deployment, Nomad's migrate
    // defaults apply (min_healthy_time 10 s, no checks here).
    const min = spec.deploymentMinHealthyMs ?? spec.health?.minHealthyMs ?? DEFAULT_MIGRATE_HEALTH.minHealthyTimeMs;
    const t = this.now();
    for (const task of spec.tasks) {
      if (task.hook) continue;
      const since = this.#runningSince.get(`${allocId}/${task.name}`);
      if (since === undefined || since > t - min) {
        this.checker.fail(
          'I8',
          `${aliasOf(allocId)}/${task.name}: reported healthy at ${t} but running only since ${since ?? 'never'} (min_healthy_time ${min})`,
          allocId,
        );
      }
    }
    if (!spec.health) return;
    const passing = this.#passingSince.get(`${allocId}/alive`);
    if (passing === undefined || passing > t - min) {
      this.checker.fail(
        'I8',
        `${aliasOf(allocId)}: reported healthy at ${t} but its check passes only since ${passing ?? 'never'} (min_healthy_time ${min})`,
        allocId,
      );
    }
  }
}
