/**
 * One set of services running together (a task's, or a group's): registered in the catalog,
 * their checks probed on the client's clock, each result on the bus (`check.status`) and in the
 * catalog, and check_restart applied. `stop()` deregisters them at once and ends every probe.
 *
 * ```
 *  start ─► register every service ─► each check: initial status, then
 *     probe now ─► thresholds ─► catalog + bus ─► check_restart? ─► restart(reason)
 *       └── clock.setTimeout(interval) ─► probe again ...
 *  stop  ─► deregister, abort probes in flight, clear timers (nothing is published after)
 * ```
 * @module
 */
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import type { Allocation, Service, ServiceCheck } from '../../model/types.ts';
import {
  applyCheckRestart,
  checkRestartReason,
  initialCheckRestart,
  type CheckRestartRule,
  type CheckRestartState,
} from '../../machines/policy/check-restart.ts';
import { applyThresholds, type CheckThresholdState } from '../../machines/policy/check-status.ts';
import type { ServiceCatalog } from './catalog.ts';
import { probeHttp, probeScript, probeTcp, type ProbeResult, type TaskExec } from './probes.ts';
import { checkEndpoint, checkName, registrationFor, type Endpoint } from './registrations.ts';
import { errorText } from '../../model/error-text.ts';

/** What a service set needs of its client. */
export interface ServiceSetDeps {
  clock: Clock;
  bus: Bus;
  catalog: ServiceCatalog;
  node: { nodeId: string; datacenter: string; address: string };
}

/** The services to run and what their checks may do. */
export interface ServiceSetSpec {
  alloc: Allocation;
  /** A task's services (`task` set), or the group's. */
  owner: { task?: string; group: string };
  services: Service[];
  /** When the task (re)started: the check_restart grace counts from here. */
  startedAt: number;
  /** Runs a script check's command inside a task. */
  exec?: TaskExec;
  /**
   * The owner's restarter for check_restart, as Nomad hands its check watcher one per workload: a
   * task's set restarts that task, a group's set the alloc's running tasks ("Restart Signaled",
   * a failure for the restart policy).
   */
  restart?(reason: string): void;
}

/** Starts a service set; returns its stop. */
export function startServiceSet(deps: ServiceSetDeps, spec: ServiceSetSpec): { stop(): void } {
  const { clock, bus, catalog } = deps;
  const ctl = new AbortController();
  const timers = new Set<unknown>();
  const ids: string[] = [];
  const allocId = spec.alloc.id;

  for (const service of spec.services) {
    let reg;
    try {
      reg = registrationFor(spec.alloc, service, spec.owner, deps.node);
    } catch (e) {
      bus.publish('client.error', { allocId, error: `service ${JSON.stringify(service.name)}: ${errorText(e)}` });
      continue;
    }
    catalog.register(reg, spec.owner.task);
    ids.push(reg.id);
    for (const check of service.checks ?? []) {
      let ep: Endpoint;
      try {
        ep = checkEndpoint(spec.alloc, service, check, { address: reg.address, port: reg.port }, deps.node.address);
      } catch (e) {
        bus.publish('client.error', { allocId, error: `check of service ${JSON.stringify(service.name)}: ${errorText(e)}` });
        continue;
      }
      runCheck(reg.id, service, check, ep);
    }
  }

  function runCheck(regId: string, service: Service, check: ServiceCheck, ep: Endpoint) {
    const name = checkName(service, check);
    const task = spec.owner.task ?? check.task ?? service.taskName;
    const rule: CheckRestartRule | undefined = check.checkRestart ? { ...check.checkRestart, intervalMs: check.intervalMs } : undefined;
    let restartState: CheckRestartState | undefined = rule ? initialCheckRestart(rule, spec.startedAt) : undefined;
    let thresholds: CheckThresholdState = { status: check.initialStatus ?? 'critical', successes: 0, failures: 0 };
    const publish = (r: ProbeResult, pending = false) => {
      if (ctl.signal.aborted) return;
      catalog.setCheck(regId, {
        name,
        status: r.status,
        output: r.output,
        timestamp: clock.now(),
        ...(pending ? { pending } : {}),
        ...(r.statusCode !== undefined ? { statusCode: r.statusCode } : {}),
        ...(task ? { task } : {}),
      });
      bus.publish('check.status', { allocId, ...(task ? { task } : {}), service: service.name, check: name, status: r.status, output: r.output });
    };
    publish({ status: thresholds.status, output: '' }, true);

    const probe = (): Promise<ProbeResult> => {
      if (check.type === 'http') return probeHttp(check, ep, ctl.signal);
      if (check.type === 'tcp') return probeTcp(check, ep, ctl.signal);
      if (!task || !spec.exec) return Promise.resolve({ status: 'critical', output: 'script check has no task to run in (set the check\'s "task")' });
      return probeScript(check, task, spec.exec, ctl.signal);
    };

    const round = async () => {
      const r = await probe();
      if (ctl.signal.aborted) return;
      thresholds = applyThresholds(thresholds, r.status, check);
      publish({ status: thresholds.status, output: r.output, ...(r.statusCode !== undefined ? { statusCode: r.statusCode } : {}) });
      if (rule && restartState && spec.restart) {
        const now = clock.now();
        const step = applyCheckRestart(rule, restartState, now, thresholds.status);
        restartState = step.state;
        if (step.restart) {
          // Watched again from the restart on: a new grace period (Nomad re-watches on start).
          restartState = initialCheckRestart(rule, now);
          spec.restart(checkRestartReason(name));
        }
      }
      if (ctl.signal.aborted) return;
      const t = clock.setTimeout(() => {
        timers.delete(t);
        void round();
      }, check.intervalMs);
      timers.add(t);
    };
    void round();
  }

  return {
    stop() {
      if (ctl.signal.aborted) return;
      ctl.abort();
      for (const t of timers) clock.clearTimeout(t);
      timers.clear();
      for (const id of ids) catalog.deregister(id);
    },
  };
}
