/**
 * `berth logs --data-dir DIR <alloc> <task> [-f] [--stderr] [--tail N]`: a task's output from its
 * rotated log files, as `nomad alloc logs` prints it. Works beside a live `berth run` on the same
 * data dir and after it.
 * @module
 */
import { readTaskLogs } from '../../../actors/drivers/logs/reader.ts';
import { flagCommand, intFlag } from '../command.ts';
import { InputError, UsageError } from '../errors.ts';
import type { Allocation } from '../../../model/types.ts';
import { allocLogsDir, DATA_DIR_FLAG, findAlloc, readStoredAllocs } from '../state-dir.ts';

/** How often `logs -f` asks the state store whether the task is dead. */
const DEAD_POLL_MS = 500;

const HELP = `usage: berth logs --data-dir DIR <alloc-id> <task> [-f] [--stderr] [--tail N]

Prints a task's stdout (--stderr: its stderr) across its rotated log files.
  -f, --follow  keep printing as the task writes, until the task is dead (as docker logs -f
                does when its container stops), Ctrl-C or SIGTERM
  --tail N      start with the last N lines only
Exit codes: 0 printed (also when a follow is ended by a signal); 1 no such allocation;
2 usage error, unknown task, or no berth state in DIR.`;

/** The last `n` lines of `text` (a trailing newline does not count as an empty line). */
function lastLines(text: string, n: number): string {
  if (n === 0) return '';
  const lines = text.split('\n');
  const endsWithNewline = lines[lines.length - 1] === '';
  if (endsWithNewline) lines.pop();
  return lines.slice(-n).join('\n') + (endsWithNewline ? '\n' : '');
}

export const logsCommand = flagCommand(
  { name: 'logs', summary: "print (or follow) a task's stdout or stderr", help: HELP },
  {
    ...DATA_DIR_FLAG,
    follow: { type: 'boolean', short: 'f' },
    stderr: { type: 'boolean' },
    tail: { type: 'string' },
  },
  async ({ values, positionals, io }) => {
    if (!values['data-dir']) throw new UsageError('logs needs --data-dir DIR', 'logs');
    if (positionals.length !== 2) throw new UsageError('logs needs an alloc id and a task name', 'logs');
    const tail = values.tail === undefined ? undefined : intFlag('logs', 'tail', values.tail, 0);
    const [allocArg, task] = positionals as [string, string];
    const { alloc } = findAlloc(readStoredAllocs(values['data-dir']), allocArg, 'logs');
    const tasks = alloc.job.taskGroups.find((g) => g.name === alloc.taskGroup)?.tasks.map((t) => t.name) ?? [];
    if (!tasks.includes(task))
      throw new InputError(values['data-dir'], `allocation ${alloc.id.slice(0, 8)} has no task ${JSON.stringify(task)} (tasks: ${tasks.join(', ')})`);
    const logsDir = allocLogsDir(values['data-dir'], alloc.id);
    const stream = values.stderr ? 'stderr' : 'stdout';

    const dataDir = values['data-dir'];
    // A dead task writes no more: following it would never end.
    const dead = (a: Allocation | undefined) => a?.taskStates?.[task]?.state === 'dead';
    const follow = !!values.follow && !dead(alloc);
    let offset = 0;
    if (tail !== undefined) {
      // Read what is there now, keep the last lines, then (with -f) go on from that byte offset.
      const chunks: Buffer[] = [];
      for await (const chunk of readTaskLogs(logsDir, task, stream)) chunks.push(chunk);
      const all = Buffer.concat(chunks);
      offset = all.length;
      io.stdout.write(lastLines(all.toString('utf8'), tail));
      if (!follow) return 0;
    }
    const stop = new AbortController();
    let taskEnded = false;
    const onSignal = () => stop.abort();
    // While following, the state store says when the task is dead (read-only, as status reads it);
    // this interval also holds the event loop open, which the reader's fs.watch does not.
    const watch = follow
      ? setInterval(() => {
          let now: Allocation | undefined;
          try {
            now = findAlloc(readStoredAllocs(dataDir), alloc.id, 'logs').alloc;
          } catch {
            now = undefined; // the alloc was destroyed meanwhile: its logs are gone too
          }
          if (now === undefined || dead(now)) {
            taskEnded = true;
            stop.abort();
          }
        }, DEAD_POLL_MS)
      : undefined;
    if (follow) for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, onSignal);
    try {
      let read = offset;
      for await (const chunk of readTaskLogs(logsDir, task, stream, { follow, offset, signal: stop.signal })) {
        read += chunk.length;
        io.stdout.write(chunk);
      }
      // The task died while we followed: print what it wrote after the last wake-up, then end.
      if (taskEnded) for await (const chunk of readTaskLogs(logsDir, task, stream, { offset: read })) io.stdout.write(chunk);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        throw new InputError(values['data-dir'], `allocation ${alloc.id.slice(0, 8)} has no log dir (it was destroyed)`);
      throw err;
    } finally {
      clearInterval(watch);
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.off(sig, onSignal);
    }
    return 0;
  },
);
