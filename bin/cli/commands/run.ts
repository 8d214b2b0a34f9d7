/**
 * `berth run <alloc.json|->`: runs one allocation on this host until it is done, streaming its
 * tasks' output next to the event timeline. Ctrl-C or SIGTERM stops it (a second signal kills at
 * once) and everything is cleaned up: tasks, executors, mounts and a temporary data dir.
 * @module
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createClient } from '../../../actors/client/client.ts';
import type { AllocRunner, Client } from '../../../actors/client/types.ts';
import { AllocDir } from '../../../actors/allocdir/alloc-dir.ts';
import { shutdownMountHelper } from '../../../actors/allocdir/mounts.ts';
import { isTerminated } from '../../../model/status.ts';
import type { Allocation } from '../../../model/types.ts';
import { loadAllocation, standaloneProblem } from '../alloc-file.ts';
import { flagCommand } from '../command.ts';
import { InputError, UsageError } from '../errors.ts';
import { parsePort, withInspector } from '../inspector.ts';
import { LogPump } from '../run/log-pump.ts';
import { runExitCode } from '../run/outcome.ts';
import { applyRestartOverride, parseRestartFlag, restartNote } from '../run/restart.ts';
import { DATA_DIR_FLAG, readStoredAllocs, stateDbPath } from '../state-dir.ts';
import { RunPrinter, TIMELINE_TYPES, type PrintMode } from '../run/printer.ts';
import { openLiveViewer, untilInterrupted, untilPagesClosed } from '../../../actors/viewer/open.ts';
import { parseGoDuration } from '../../../model/duration.ts';
import { writeLine } from '../io.ts';
import { VIEWER_FLAGS, VIEWER_HELP, viewerOptions } from '../viewer-flags.ts';
import { errorText } from '../../../model/error-text.ts';

/** `--stats 5s`: a positive duration. */
function statsInterval(value: string): number {
  let ms = NaN;
  try {
    ms = parseGoDuration(value);
  } catch {
    // reported below
  }
  if (!(ms > 0)) throw new UsageError(`--stats wants a duration such as 5s, got ${JSON.stringify(value)}`, 'run');
  return ms;
}

const HELP = `usage: berth run <alloc.json|-> [--data-dir DIR] [--force] [--restart attempts=N,delay=D,interval=D,mode=M]
                 [--quiet | --json] [--verbose] [--stats 5s] [--inspect [--port N]] [--view] [--record FILE]

Runs one allocation (berth's JSON or Nomad API JSON; - reads stdin) until every task is done,
showing each task's stdout/stderr with a "task |" prefix beside the event timeline.

  --data-dir DIR  keep state and logs in DIR (read them with berth status / berth logs);
                  without it a temporary dir is used and removed after the logs were shown.
                  An allocation whose previousAllocation (or preemptedAllocations) ran in DIR
                  waits for it and takes over its sticky data, as on a Nomad client
  --force         run an allocation id that already ran in --data-dir again (the old one is
                  destroyed first: its dir and logs go); without it that is refused
  --restart attempts=0,delay=1s,interval=24h,mode=fail
                  override the group's restart policy (any of the four; Nomad's batch default
                  is 3 attempts in 24h, 15s apart, so a failing task takes about a minute to fail)
  --verbose       say more: why there are no cgroups, in full
  --quiet         show only the tasks' output
  --json          one JSON object per line: events, output lines, notes, then the result
  --stats 5s      print each running task's CPU and memory on that interval
  --inspect       serve the Stately inspector relay on --port (default 8080)
${VIEWER_HELP}

Ctrl-C (SIGINT) or SIGTERM stops the allocation, kills its tasks and cleans up; a second signal
kills at once. Under a supervisor, run node_modules/.bin/berth itself: npx does not pass on a
signal sent to its own pid. Exit codes: the task's own exit code for a batch allocation of one task, else
0 complete, 1 failed; 2 usage or input error; 130 after SIGINT, 143 after SIGTERM.`;

/** Stops after the first signal, kills after the second. */
class Stopper {
  signal: 'SIGINT' | 'SIGTERM' | undefined;
  #count = 0;
  #client: Client | undefined;
  #runner: AllocRunner | undefined;
  readonly #printer: RunPrinter;
  readonly #handlers = new Map<NodeJS.Signals, () => void>();

  constructor(printer: RunPrinter) {
    this.#printer = printer;
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      const h = () => this.#onSignal(sig);
      this.#handlers.set(sig, h);
      process.on(sig, h);
    }
  }

  /** The allocation to stop, once it was added. */
  attach(client: Client, runner: AllocRunner): void {
    this.#client = client;
    this.#runner = runner;
    if (this.signal) this.#stop();
  }

  dispose(): void {
    for (const [sig, h] of this.#handlers) process.off(sig, h);
  }

  #onSignal(sig: 'SIGINT' | 'SIGTERM'): void {
    this.#count++;
    if (this.#count === 1) {
      this.signal = sig;
      this.#printer.note(`${sig}: stopping the allocation (send it again to kill at once)`, { signal: sig });
      this.#stop();
    } else if (this.#count === 2) {
      this.#printer.note(`${sig} again: killing the tasks now, then cleaning up`, { signal: sig });
      this.#runner?.signal(undefined, 'SIGKILL').catch(() => {});
    } else {
      this.#printer.note('still cleaning up (tasks, mounts, dirs)', { signal: sig });
    }
  }

  #stop(): void {
    const r = this.#runner;
    if (!r || !this.#client || r.isDestroyed()) return;
    const a = r.alloc();
    if (a.desiredStatus === 'run') this.#client.updateAlloc({ ...a, desiredStatus: 'stop', allocModifyIndex: a.allocModifyIndex + 1 });
  }
}

/** Resolves once every task is dead and the client status is terminal. */
function finished(client: Client, r: AllocRunner): Promise<Allocation> {
  const done = (a: Allocation) => isTerminated(a) && Object.values(a.taskStates ?? {}).every((t) => t.state === 'dead');
  return new Promise((resolve) => {
    const sub = client.bus.of('alloc.updated').subscribe((m) => {
      if (m.allocId === r.allocId && done(m.alloc)) {
        sub.unsubscribe();
        resolve(m.alloc);
      }
    });
    if (done(r.alloc())) {
      sub.unsubscribe();
      resolve(r.alloc());
    }
  });
}

export const runCommand = flagCommand(
  { name: 'run', summary: "run one allocation until it is done, showing its tasks' output", help: HELP },
  {
    ...DATA_DIR_FLAG,
    json: { type: 'boolean' },
    quiet: { type: 'boolean', short: 'q' },
    inspect: { type: 'boolean' },
    port: { type: 'string' },
    stats: { type: 'string' },
    force: { type: 'boolean' },
    restart: { type: 'string' },
    verbose: { type: 'boolean', short: 'v' },
    ...VIEWER_FLAGS,
  },
  async ({ values, positionals, io }) => {
    if (positionals.length !== 1)
      throw new UsageError(
        positionals.length ? `run takes one allocation file, got ${positionals.length} arguments` : 'run needs an allocation file (or - for stdin)',
        'run',
      );
    if (values.quiet && values.json) throw new UsageError('--quiet and --json cannot be used together', 'run');
    const port = parsePort('run', values.port);
    const mode: PrintMode = values.json ? 'json' : values.quiet ? 'quiet' : 'text';
    const statsIntervalMs = values.stats === undefined ? 0 : statsInterval(values.stats);
    const viewOpts = viewerOptions('run', values, (line) => writeLine(io.stderr, line));
    const override = values.restart === undefined ? undefined : parseRestartFlag(values.restart);

    // Everything that can be refused is checked before anything is created on disk.
    const loaded = await loadAllocation(positionals[0]!, io.stdin);
    const { source } = loaded;
    const alloc = override ? applyRestartOverride(loaded.alloc, override) : loaded.alloc;
    const keep = values['data-dir'] !== undefined;
    // What the data dir already holds: an earlier run of this very alloc, or the allocs it waits for.
    const stored = keep && existsSync(stateDbPath(resolve(values['data-dir']!))) ? readStoredAllocs(values['data-dir']!) : [];
    const again = stored.find((s) => s.alloc.id === alloc.id);
    if (again && !values.force)
      throw new InputError(
        source,
        `allocation ${alloc.id} already ran in ${values['data-dir']} (${again.alloc.clientStatus}); leave out its id for a new one, ` +
          'or add --force to destroy the old one (its dir and logs) and run it again',
      );
    const local = new Set(stored.map((s) => s.alloc.id));
    const standalone = standaloneProblem(alloc, local);
    if (standalone) throw new InputError(source, standalone);
    const waitsLocally = [alloc.previousAllocation, ...(alloc.preemptedAllocations ?? [])].some((id) => id && local.has(id));
    const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup)!;
    const taskNames = group.tasks.map((t) => t.name);
    const printer = new RunPrinter(io, mode, taskNames);
    const dataDir = keep ? resolve(values['data-dir']!) : mkdtempSync(join(tmpdir(), 'berth-run-'));
    const stopper = new Stopper(printer);
    try {
      return await withInspector(io, !!values.inspect, port, async (insp) => {
        let client: Client;
        try {
          client = createClient({ dataDir, statsIntervalMs, ...(insp ? { inspect: insp.inspect } : {}), ...(values.record ? { record: values.record } : {}) });
        } catch (err) {
          throw new InputError(values['data-dir'] ?? dataDir, `cannot use as data dir: ${errorText(err)}`, [], { cause: err });
        }
        const subs = TIMELINE_TYPES.map((t) => client.bus.of(t).subscribe((m) => printer.event(m)));
        const restarts = new Map<string, number>();
        subs.push(
          client.bus.of('task.event').subscribe((m) => {
            if (m.allocId !== alloc.id || m.event.type !== 'Restarting') return;
            const attempt = (restarts.get(m.task) ?? 0) + 1;
            restarts.set(m.task, attempt);
            const note = restartNote(alloc, m.task, m.event, attempt, override !== undefined);
            if (note) printer.note(note, { task: m.task, event: 'restart' });
          }),
          client.bus.of('cgroups.detected').subscribe((m) => {
            if (values.verbose && m.version === null) printer.note(`${m.message}${m.detail ? ` (${m.detail})` : ''}`, { event: 'cgroups' });
          }),
        );
        let runner: AllocRunner | undefined;
        try {
          const viewer = values.view ? await openLiveViewer(client, viewOpts) : undefined;
          if (again || waitsLocally) {
            // The earlier allocs of this data dir come back (a finished one runs nothing), so a
            // replacement watches its previous alloc locally and takes over its data.
            await client.restore();
            if (again) await client.runner(alloc.id)?.destroy();
          }
          runner = client.addAlloc(alloc);
          const pump = new LogPump(runner, taskNames, (task, stream, line) => printer.output(task, stream, line));
          const ended = finished(client, runner);
          stopper.attach(client, runner);
          // Follow the logs once the alloc dir exists (it is built in pending).
          await Promise.race([runner.waitFor('running'), ended]);
          pump.start();
          const final = await ended;
          await pump.finish();
          const exitCode = runExitCode(final, stopper.signal);
          if (values.view && !stopper.signal) {
            // Time to look at the finished allocation: the next Ctrl-C ends the command.
            stopper.dispose();
            printer.note(`allocation ${alloc.id.slice(0, 8)}: ${final.clientStatus}; the viewer stays open until its page is closed, or Ctrl-C`);
            const stop = new AbortController();
            await Promise.race([untilInterrupted(stop.signal), untilPagesClosed(viewer!, stop.signal)]);
            stop.abort();
          }
          if (keep) {
            // Keep the data (state and logs) but not the task dirs' tmpfs mounts.
            const dir = runner.allocDir;
            for (const t of dir instanceof AllocDir ? dir.tasks() : [])
              await t.unmount().catch((err: Error) => printer.note(`unmounting ${t.dir}: ${err.message}`));
          } else {
            await runner.destroy();
          }
          printer.result({
            allocId: alloc.id,
            clientStatus: final.clientStatus,
            exitCode,
            ...(stopper.signal ? { signal: stopper.signal } : {}),
            ...(keep ? { dataDir } : {}),
          });
          if (keep && mode === 'text') printer.note(`state and logs kept in ${dataDir}: berth status --data-dir ${dataDir} ${alloc.id.slice(0, 8)}`);
          return exitCode;
        } finally {
          // On an error above: still kill and remove what was started (a temp dir entirely).
          if (runner && !runner.isDestroyed() && (!keep || !isTerminated(runner.alloc()))) await runner.destroy().catch(() => {});
          subs.forEach((s) => s.unsubscribe());
          await client.shutdown();
        }
      });
    } finally {
      stopper.dispose();
      await shutdownMountHelper();
      if (!keep) rmSync(dataDir, { recursive: true, force: true });
    }
  },
);
