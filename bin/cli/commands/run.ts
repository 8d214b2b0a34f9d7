/**
 * `berth run <alloc.json|->`: runs one allocation on this host until it is done, streaming its
 * tasks' output next to the event timeline. Ctrl-C or SIGTERM stops it (a second signal kills at
 * once) and everything is cleaned up: tasks, executors, mounts and a temporary data dir.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createClient } from '../../../actors/client/client.ts';
import type { AllocRunner, Client } from '../../../actors/client/types.ts';
import { AllocDir } from '../../../actors/allocdir/alloc-dir.ts';
import { shutdownMountHelper } from '../../../actors/allocdir/mounts.ts';
import { isTerminated } from '../../../model/status.ts';
import type { Allocation } from '../../../model/types.ts';
import { loadAllocation, standaloneProblem } from '../alloc-file.ts';
import { parseCommandArgs, printHelp, type Command } from '../command.ts';
import { InputError, UsageError } from '../errors.ts';
import { parsePort, withInspector } from '../inspector.ts';
import { LogPump } from '../run/log-pump.ts';
import { runExitCode } from '../run/outcome.ts';
import { RunPrinter, TIMELINE_TYPES, type PrintMode } from '../run/printer.ts';
import { openLiveViewer, untilInterrupted } from '../../../actors/viewer/open.ts';
import { parseGoDuration } from '../../../model/duration.ts';
import { writeLine } from '../io.ts';
import { VIEWER_FLAGS, VIEWER_HELP, viewerOptions } from '../viewer-flags.ts';

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

const HELP = `usage: berth run <alloc.json|-> [--data-dir DIR] [--quiet | --json] [--stats 5s] [--inspect [--port N]]
                 [--view] [--record FILE]

Runs one allocation (berth's JSON or Nomad API JSON; - reads stdin) until every task is done,
showing each task's stdout/stderr with a "task |" prefix beside the event timeline.

  --data-dir DIR  keep state and logs in DIR (read them with berth status / berth logs);
                  without it a temporary dir is used and removed after the logs were shown
  --quiet         show only the tasks' output
  --json          one JSON object per line: events, output lines, notes, then the result
  --stats 5s      print each running task's CPU and memory on that interval
  --inspect       serve the Stately inspector relay on --port (default 8080)
${VIEWER_HELP}

Ctrl-C (SIGINT) or SIGTERM stops the allocation, kills its tasks and cleans up; a second signal
kills at once. Exit codes: the task's own exit code for a batch allocation of one task, else
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

export const runCommand: Command = {
  name: 'run',
  summary: "run one allocation until it is done, showing its tasks' output",
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs('run', argv, {
      'data-dir': { type: 'string' },
      quiet: { type: 'boolean', short: 'q' },
      json: { type: 'boolean' },
      inspect: { type: 'boolean' },
      port: { type: 'string' },
      stats: { type: 'string' },
      ...VIEWER_FLAGS,
    });
    if (values.help) return printHelp(io, HELP);
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

    // Everything that can be refused is checked before anything is created on disk.
    const { alloc, source } = await loadAllocation(positionals[0]!, io.stdin);
    const standalone = standaloneProblem(alloc);
    if (standalone) throw new InputError(source, standalone);
    const group = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup)!;
    const taskNames = group.tasks.map((t) => t.name);
    const printer = new RunPrinter(io, mode, taskNames);
    const keep = values['data-dir'] !== undefined;
    const dataDir = keep ? resolve(values['data-dir']!) : mkdtempSync(join(tmpdir(), 'berth-run-'));
    const stopper = new Stopper(printer);
    try {
      return await withInspector(io, !!values.inspect, port, async (insp) => {
        let client: Client;
        try {
          client = createClient({ dataDir, statsIntervalMs, ...(insp ? { inspect: insp.inspect } : {}), ...(values.record ? { record: values.record } : {}) });
        } catch (err) {
          throw new InputError(values['data-dir'] ?? dataDir, `cannot use as data dir: ${(err as Error).message}`, [], { cause: err });
        }
        const subs = TIMELINE_TYPES.map((t) => client.bus.of(t).subscribe((m) => printer.event(m)));
        let runner: AllocRunner | undefined;
        try {
          if (values.view) await openLiveViewer(client, viewOpts);
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
            printer.note(`allocation ${alloc.id.slice(0, 8)}: ${final.clientStatus}; the viewer stays open, Ctrl-C to exit`);
            await untilInterrupted();
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
};
