/**
 * `berth alloc logs [-f] [-stderr] [-tail] [-n LINES] [-c BYTES] ID [TASK]`: a task's log, read
 * through the agent's framed log stream (`/v1/client/fs/logs`), decoded as it comes.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';

const HELP = `usage: berth alloc logs [-f] [-stderr] [-tail] [-n LINES] [-c BYTES] ALLOC [TASK]

A task's stdout (or -stderr). TASK may be left out when the group has one task.
  -f        follow: keep printing what the task writes (Ctrl-C ends)
  -tail     start near the end: the last -n lines (default 10) or -c bytes
Exit codes: 0 printed; 1 no such allocation or task, or an error; 2 usage error.`;

type Obj = Record<string, unknown>;

/** `berth alloc logs`. */
export const allocLogsCommand = apiCommand(
  { command: 'alloc logs', summary: "print a task's logs", help: HELP, args: [[1, 2], 'expects an allocation id and optionally a task'] },
  { f: 'boolean', stderr: 'boolean', tail: 'boolean', n: 'string', c: 'string', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const a = await api.resolveAlloc(positionals[0]!);
    const group = ((a.Job as Obj).TaskGroups as Obj[]).find((g) => g.Name === a.TaskGroup)!;
    const tasks = (group.Tasks as Obj[]).map((t) => String(t.Name));
    let task = positionals[1];
    if (task === undefined) {
      if (tasks.length !== 1) throw new UsageError(`allocation has ${tasks.length} tasks (${tasks.join(', ')}); name one`, 'alloc logs');
      task = tasks[0]!;
    } else if (!tasks.includes(task)) throw new UsageError(`no task ${JSON.stringify(task)} in the allocation (${tasks.join(', ')})`, 'alloc logs');
    const lines = flags.n === undefined ? (flags.tail ? 10 : undefined) : Number(flags.n);
    const bytes = flags.c === undefined ? undefined : Number(flags.c);
    const q = new URLSearchParams({ task, type: flags.stderr ? 'stderr' : 'stdout', follow: String(!!flags.f) });
    if (flags.tail || lines !== undefined || bytes !== undefined) {
      q.set('origin', 'end');
      q.set('offset', String(bytes ?? 64 * 1024));
    }
    const ac = new AbortController();
    const stop = () => ac.abort();
    process.once('SIGINT', stop);
    try {
      const res = await api.raw('GET', `/v1/client/fs/logs/${a.ID}?${q}`, undefined, ac.signal);
      let buf = '';
      let pending: Buffer[] | undefined = lines !== undefined && bytes === undefined ? [] : undefined;
      const emit = (data: Buffer) => {
        if (pending) pending.push(data);
        else io.stdout.write(data);
      };
      const flushTail = () => {
        if (!pending) return;
        const text = Buffer.concat(pending).toString('utf8');
        const all = text.split('\n');
        const trailing = all[all.length - 1] === '' ? all.pop() : undefined;
        io.stdout.write(all.slice(-lines!).join('\n') + (trailing === '' ? '\n' : ''));
        pending = undefined;
      };
      try {
        for await (const chunk of res) {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const frame = JSON.parse(buf.slice(0, nl)) as { Data?: string };
            buf = buf.slice(nl + 1);
            if (frame.Data) emit(Buffer.from(frame.Data, 'base64'));
            else if (flags.f) flushTail(); // a heartbeat: the backlog is out
          }
          if (flags.f && pending && buf === '') flushTail();
        }
      } catch (e) {
        if (!ac.signal.aborted) throw e;
      }
      flushTail();
    } finally {
      process.off('SIGINT', stop);
    }
    if (io.stdout === process.stdout) writeLine(io.stderr, '');
    return 0;
  },
);
