/**
 * `prestartTask`: the task runner's prestart hooks, as the task chart invokes them before each
 * start of a task that has artifacts: build the task dir (as the start would), then fetch every
 * artifact not yet fetched for this alloc, three at a time ("Downloading Artifacts"). A failure
 * is Nomad's "Failed Artifact Download" with `failed to download artifact "<source>": <reason>`, a
 * recoverable start error: the task's restart policy decides what happens next.
 * @module
 */
import { fromPromise } from 'xstate';
import type { PrestartOutput } from '../../machines/task/index.ts';
import { taskEvent } from '../../machines/policy/task-events.ts';
import { AllocNotFoundError, TaskNotFoundError } from '../../model/errors.ts';
import { taskGroupOf } from '../../model/status.ts';
import type { TaskEvent } from '../../model/types.ts';
import { lookupUser } from '../drivers/exec.ts';
import { taskEnvironment } from '../runner/task-actors.ts';
import { taskNodeScope } from '../runner/start-steps.ts';
import type { RunnerInternals, Runtime } from '../runner/runtime.ts';
import { fetchArtifacts } from './fetch-all.ts';
import type { ArtifactLookup } from './lookup.ts';
import { RwLock } from '../allocdir/lock.ts';
import { prestartTemplates } from '../runner/template-hook.ts';

/** Default bound on one artifact fetch (Nomad's `http_read_timeout` is 30 minutes). */
export const DEFAULT_ARTIFACT_TIMEOUT_MS = 30 * 60_000;
/** Nomad's default ephemeral disk, the bound on what artifacts write when the group sets none. */
const DEFAULT_DISK_MB = 300;

/** The alloc dir's lock (the real AllocDir has one; another handle gets a private one). */
const lockOf = (r: RunnerInternals): RwLock => (r.allocDir as { lock?: RwLock }).lock ?? new RwLock();

const msg = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The `prestartTask` actor of a runtime (see the module doc). */
export function prestartTaskLogic(rt: Runtime, opts: { timeoutMs?: number; maxBytes?: number; lookup?: ArtifactLookup } = {}) {
  /** Artifacts fetched per runner and task: a restart does not fetch them again (Nomad's hook state). */
  const fetched = new WeakMap<RunnerInternals, Set<string>>();
  return fromPromise<PrestartOutput, { allocId: string; taskName: string; attempt: number; now: number }>(async ({ input, signal }) => {
    const events: TaskEvent[] = [];
    try {
      const r = rt.registry.get(input.allocId);
      if (!r) throw new AllocNotFoundError(input.allocId);
      const alloc = r.serverAlloc();
      const group = taskGroupOf(alloc);
      const task = group.tasks.find((t) => t.name === input.taskName);
      if (!task) throw new TaskNotFoundError(input.taskName);
      const done = fetched.get(r) ?? new Set<string>();
      fetched.set(r, done);
      const todo = (task.artifacts ?? []).filter((a) => !done.has(`${task.name}\0${JSON.stringify(a)}`));
      if (!todo.length && !task.templates?.length) return { ok: true, time: rt.clock.now(), events };
      const driver = rt.drivers[task.driver];
      const chroot = driver?.capabilities.fsIsolation === 'chroot';
      const taskDir = r.allocDir.taskDir(task.name) ?? r.allocDir.newTaskDir(task.name, { secretsMB: task.resources?.secretsMB });
      await taskDir.build(chroot ? { chroot: { ...rt.chrootEnv } } : undefined);
      if (todo.length) events.push(taskEvent('Downloading Artifacts', rt.clock.now()));
      const env = taskEnvironment(rt, alloc, task, taskDir, r.allocDir, chroot);
      // What is written belongs to the task's user: nobody by default for exec, berth's own for raw_exec.
      const owner = chroot ? lookupUser(task.user ?? 'nobody') : { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
      const maxBytes = opts.maxBytes ?? (group.ephemeralDisk?.sizeMB ?? DEFAULT_DISK_MB) * 1024 * 1024;
      // Three at a time, as Nomad's hook; each one in place is recorded at once, so a failure of
      // another does not make the restart fetch it again.
      await fetchArtifacts(
        todo,
        {
          dest: { dir: taskDir.dir, allocId: alloc.id, built: true, lock: lockOf(r) },
          env,
          node: taskNodeScope(rt, alloc),
          owner,
          maxBytes,
          timeoutMs: opts.timeoutMs ?? DEFAULT_ARTIFACT_TIMEOUT_MS,
          ...(opts.lookup ? { lookup: opts.lookup } : {}),
          signal: AbortSignal.any([signal, r.destroySignal]),
        },
        { onFetched: (a) => done.add(`${task.name}\0${JSON.stringify(a)}`) },
      );
      // The template hook runs after the artifacts (a template's `source` may be one).
      try {
        await prestartTemplates(rt, r, task, { env, taskDir, allocDir: r.allocDir }, AbortSignal.any([signal, r.destroySignal]));
      } catch (e) {
        if (signal.aborted) throw e;
        const error = `Template failed: ${msg(e)}`;
        events.push(taskEvent('Task hook failed', rt.clock.now(), { displayMessage: error, details: { fails_task: 'true' } }));
        return { ok: false, time: rt.clock.now(), events, error, recoverable: false, jitter: rt.random() };
      }
      return { ok: true, time: rt.clock.now(), events };
    } catch (e) {
      // An artifact's failure already reads `failed to download artifact "<source>": <reason>`.
      const error = msg(e);
      events.push(taskEvent('Failed Artifact Download', rt.clock.now(), { details: { download_error: error } }));
      return { ok: false, time: rt.clock.now(), events, error, recoverable: true, jitter: rt.random() };
    }
  });
}
