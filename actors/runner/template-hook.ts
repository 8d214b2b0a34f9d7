/**
 * Nomad's template hook, as berth's task chart runs it: the prestart step that renders a task's
 * templates (blocking, with "Missing: ..." events, until what they read exists), the
 * `taskTemplates` actor that watches while the task runs and tells the chart what changed (after
 * the templates' `splay`), and the `templateEffects` actor that sends the signals and runs the
 * change scripts the chart chose. Each task's {@link TaskTemplateManager} lives in its runner.
 * @module
 */
import { fromCallback, fromPromise } from 'xstate';
import { sleep, type Clock } from '../../model/clock.ts';
import { errorText } from '../../model/error-text.ts';
import { BerthError } from '../../model/errors.ts';
import type { Task } from '../../model/types.ts';
import type { WorkloadIdentity } from '../../model/variables.ts';
import type { TemplateEffectsOutput, TemplateScriptOutput } from '../../machines/policy/template-change.ts';
import type { TaskMachineEvent, TaskServicesInput, TemplateEffectsInput } from '../../machines/task/index.ts';
import type { ClientOptions } from '../client/types.ts';
import type { ServiceCatalog } from '../services/catalog.ts';
import type { RenderContext } from './render-templates.ts';
import type { RunnerInternals, Runtime, TemplateRuntime } from './runtime.ts';
import { TaskTemplateManager } from './template-manager.ts';
import { taskEnvironment } from './start-steps.ts';
import { taskGroupOf } from '../../model/status.ts';

/** Nomad's client defaults: `function_denylist = ["plugin", "writeToFile"]`, 5 min queries, 3 s event rate. */
export const TEMPLATE_DEFAULTS = { denylist: ['plugin', 'writeToFile'], blockQueryWaitMs: 300_000, eventRateMs: 3_000 } as const;

/** Nomad's default `change_script` timeout. */
const SCRIPT_TIMEOUT_MS = 5_000;

/** The client-wide template settings from its options. */
export function templateRuntime(options: Pick<ClientOptions, 'variables' | 'templates'>, clock: Clock, catalog: ServiceCatalog): TemplateRuntime {
  const t = options.templates ?? {};
  return {
    data: {
      ...(options.variables ? { variables: options.variables } : {}),
      catalog,
      clock,
      blockQueryWaitMs: t.blockQueryWaitMs ?? TEMPLATE_DEFAULTS.blockQueryWaitMs,
    },
    eventRateMs: t.maxTemplateEventRateMs ?? TEMPLATE_DEFAULTS.eventRateMs,
    denylist: t.functionDenylist ?? TEMPLATE_DEFAULTS.denylist,
    noSandbox: t.disableFileSandbox ?? false,
  };
}

/** The task's workload identity: a dispatched or periodic child reads as its parent job. */
function identityOf(r: RunnerInternals, task: Task): WorkloadIdentity {
  const alloc = r.serverAlloc();
  return {
    namespace: alloc.job.namespace ?? 'default',
    jobId: alloc.job.parentId ?? alloc.job.id,
    group: alloc.taskGroup,
    task: task.name,
    allocId: alloc.id,
  };
}

/** The task's manager, made at its first use with the task's latest definition. */
export function templateManagerOf(rt: Runtime, r: RunnerInternals, task: Task): TaskTemplateManager {
  let m = r.templates.get(task.name);
  if (!m || m.task !== task) {
    m = new TaskTemplateManager(task, {
      data: rt.templates.data,
      who: identityOf(r, task),
      region: rt.region ?? r.serverAlloc().job.region ?? 'global',
      clock: rt.clock,
      eventRateMs: rt.templates.eventRateMs,
      denylist: rt.templates.denylist,
      noSandbox: rt.templates.noSandbox,
      emit: (event) => r.toTask(task.name, { type: 'append', event }),
    });
    r.templates.set(task.name, m);
  }
  return m;
}

/**
 * The prestart step: renders the task's templates before its start (after its artifacts, as
 * Nomad orders the hooks). A restart renders afresh only with `render_templates`; otherwise
 * the files keep what the watch last wrote, and what changed while the task was not running is
 * written now.
 */
export async function prestartTemplates(rt: Runtime, r: RunnerInternals, task: Task, ctx: RenderContext, signal: AbortSignal): Promise<void> {
  if (!task.templates?.length) return;
  const m = templateManagerOf(rt, r, task);
  const force = m.rendered && (task.restartPolicy?.renderTemplates ?? r.group.restartPolicy?.renderTemplates ?? false);
  await m.render(ctx, signal, { force });
}

/** The env variables the task's `env = true` templates set (empty before a render). */
export const templateEnv = (r: RunnerInternals, taskName: string): Record<string, string> => r.templates.get(taskName)?.env ?? {};

/** The `taskTemplates` actor (see the module doc). */
export function taskTemplatesLogic(rt: Runtime) {
  return fromCallback<TaskMachineEvent, TaskServicesInput>(({ input, sendBack }) => {
    const r = rt.registry.get(input.allocId);
    const task = r && taskGroupOf(r.serverAlloc()).tasks.find((t) => t.name === input.taskName);
    if (!r || !task?.templates?.length) return undefined;
    const m = templateManagerOf(rt, r, task);
    const stop = new AbortController();
    let n = 0;
    void (async () => {
      // A task reattached after a restart of the host: render once (its files stay as they are
      // when nothing changed), then watch.
      if (!m.rendered) {
        const taskDir = r.allocDir.taskDir(task.name);
        if (!taskDir) return;
        const chroot = rt.drivers[task.driver]?.capabilities.fsIsolation === 'chroot';
        const env = taskEnvironment(rt, r.serverAlloc(), task, taskDir, r.allocDir, chroot);
        await m.render({ env, taskDir, allocDir: r.allocDir }, stop.signal);
      }
      for (;;) {
        const changed = await m.nextChange(stop.signal);
        // Nomad's splay: a random wait up to the largest splay of the changed templates.
        const splay = Math.max(0, ...changed.map((t) => t.splayMs ?? 0));
        if (splay > 0) await sleep(rt.random() * splay, stop.signal, rt.clock);
        sendBack({
          type: 'template.changed',
          time: rt.clock.now(),
          requestId: `${input.startedAt}-${n++}`,
          changes: changed.map((t) => ({
            changeMode: t.changeMode ?? 'restart',
            ...(t.changeSignal ? { changeSignal: t.changeSignal } : {}),
            ...(t.changeScript ? { changeScript: t.changeScript } : {}),
          })),
        });
      }
    })().catch((e) => {
      if (!stop.signal.aborted) sendBack({ type: 'template.failed', time: rt.clock.now(), error: errorText(e) });
    });
    return () => stop.abort();
  });
}

/** The `templateEffects` actor: the chosen signals, then each script (bounded by its timeout). */
export function templateEffectsLogic(rt: Runtime) {
  return fromPromise<TemplateEffectsOutput, TemplateEffectsInput>(async ({ input, signal }) => {
    const driver = rt.drivers[input.handle.driver];
    for (const sig of input.signals) await driver?.signal(input.handle, sig).catch(() => {}); // a task gone meanwhile
    const scripts: TemplateScriptOutput[] = [];
    const r = rt.registry.get(input.allocId);
    for (const script of input.scripts) {
      try {
        if (!r) throw new BerthError('allocation gone');
        const res = await r.exec(input.taskName, [script.command, ...(script.args ?? [])], {
          signal,
          timeoutMs: script.timeoutMs ?? SCRIPT_TIMEOUT_MS,
        });
        scripts.push({ script, exitCode: res.exitCode, time: rt.clock.now() });
      } catch (e) {
        scripts.push({ script, exitCode: -1, error: errorText(e), time: rt.clock.now() });
      }
    }
    return { scripts };
  });
}
