// Builders for the scheduler's table specs: jobs, nodes, allocs, a counter id generator, and a
// tiny store that applies a plan the way the agent will (replace each alloc by id).
import type { Allocation, Job, TaskGroup, UpdateStrategy } from '../../../index.ts';
import {
  newEvaluation,
  schedule,
  type EvalTrigger,
  type Evaluation,
  type Plan,
  type ScheduleInput,
  type SchedulerConfiguration,
  type SchedulerNode,
} from '../../../agent/scheduler/index.ts';

/** An update block with Nomad's deadlines and stagger; each spec sets what its rows vary. */
export function updateStrategy(over: Pick<UpdateStrategy, 'maxParallel' | 'canary' | 'healthCheck' | 'minHealthyTimeMs'>): UpdateStrategy {
  return {
    healthyDeadlineMs: 300_000,
    progressDeadlineMs: 600_000,
    autoRevert: false,
    autoPromote: false,
    staggerMs: 30_000,
    ...over,
  };
}

/** A node with lowered limits (the seed's `cpu_total_compute = 3000`, `memory_total_mb = 3072`). */
export function node(over: Partial<SchedulerNode> = {}): SchedulerNode {
  return { id: 'node-1', name: 'n1', datacenter: 'dc1', resources: { cpuMHz: 3000, memoryMB: 3072, diskMB: 10_000, cores: 4 }, ...over };
}

/** A service job with one group `g` and one task `t`. */
export function job(
  id: string,
  opts: {
    priority?: number;
    count?: number;
    cpu?: number;
    memoryMB?: number;
    cores?: number;
    type?: Job['type'];
    version?: number;
    group?: Partial<TaskGroup>;
  } = {},
): Job {
  return {
    id,
    type: opts.type ?? 'service',
    priority: opts.priority ?? 50,
    version: opts.version ?? 0,
    taskGroups: [
      {
        name: 'g',
        count: opts.count ?? 1,
        ephemeralDisk: { sizeMB: 300 },
        tasks: [
          {
            name: 't',
            driver: 'raw_exec',
            config: { command: '/bin/sleep', args: ['1000'] },
            resources: { cpu: opts.cpu ?? 100, memoryMB: opts.memoryMB ?? 100, cores: opts.cores },
          },
        ],
        ...opts.group,
      },
    ],
  };
}

/** Preemption on for the given scheduler types. */
export function preemption(...types: Array<'service' | 'batch' | 'sysbatch' | 'system'>): SchedulerConfiguration {
  return {
    preemptionConfig: {
      serviceSchedulerEnabled: types.includes('service'),
      batchSchedulerEnabled: types.includes('batch'),
      sysbatchSchedulerEnabled: types.includes('sysbatch'),
      systemSchedulerEnabled: types.includes('system'),
    },
  };
}

/** A little world: jobs, allocs and evals, and `run` to schedule an eval and apply its plan. */
export class World {
  jobs: Job[] = [];
  allocs = new Map<string, Allocation>();
  evals = new Map<string, Evaluation>();
  now = 1_000_000;
  private n = 0;
  node: SchedulerNode;
  constructor(
    schedulerNode?: SchedulerNode,
    public config?: SchedulerConfiguration,
  ) {
    this.node = schedulerNode ?? node();
  }

  newId = (): string => `id-${String(++this.n).padStart(4, '0')}`;

  /** Register (or update) a job and process its eval. */
  register(j: Job, triggeredBy: EvalTrigger = 'job-register'): Plan {
    this.jobs = [...this.jobs.filter((x) => x.id !== j.id), j];
    return this.evaluate(j.id, triggeredBy);
  }

  /** Make a pending eval for a job and process it. */
  evaluate(jobId: string, triggeredBy: EvalTrigger): Plan {
    const j = this.jobs.find((x) => x.id === jobId) ?? { id: jobId, type: 'service' as const };
    const ev = newEvaluation({ id: this.newId(), job: j, triggeredBy, now: this.now });
    return this.process(ev);
  }

  /** Process an eval (pending or blocked) and apply the plan. */
  process(ev: Evaluation, over: Partial<ScheduleInput> = {}): Plan {
    const plan = schedule({
      node: this.node,
      jobs: this.jobs,
      allocs: [...this.allocs.values()],
      config: this.config,
      eval: ev,
      now: this.now,
      newId: this.newId,
      ...over,
    });
    this.apply(plan);
    return plan;
  }

  apply(plan: Plan): void {
    for (const a of [...plan.stop, ...plan.preempt, ...plan.inPlace, ...plan.attributeUpdates, ...plan.place]) this.allocs.set(a.id, a);
    for (const e of [plan.eval, ...plan.evals]) this.evals.set(e.id, e);
  }

  /** Process every pending eval that is ready (preemption follow-ups), oldest first. */
  drain(): Plan[] {
    const plans: Plan[] = [];
    for (;;) {
      const next = [...this.evals.values()].find((e) => e.status === 'pending' && (e.waitUntil ?? 0) <= this.now);
      if (!next) return plans;
      plans.push(this.process(next));
    }
  }

  /** Set a client status on an alloc (the client reporting). */
  client(id: string, clientStatus: Allocation['clientStatus'], finishedAt = this.now): void {
    const a = this.allocs.get(id)!;
    const taskStates =
      clientStatus === 'failed' || clientStatus === 'complete'
        ? { t: { state: 'dead' as const, failed: clientStatus === 'failed', restarts: 0, finishedAt, events: [] } }
        : a.taskStates;
    this.allocs.set(id, { ...a, clientStatus, taskStates, modifyTime: finishedAt });
  }

  running(jobId?: string): Allocation[] {
    return [...this.allocs.values()].filter((a) => a.desiredStatus === 'run' && (!jobId || a.jobId === jobId)).sort((a, b) => (a.name! < b.name! ? -1 : 1));
  }
}
