/**
 * `berth alloc exec [-task T] [-i=false] ALLOC CMD [ARGS...]`: runs a command inside a running
 * task through the agent's exec WebSocket (Nomad's protocol), streaming stdin, stdout and stderr;
 * exits with the command's exit code.
 * @module
 */
import WebSocket from 'ws';
import type { Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { AgentApi, API_FLAGS, ApiRequestError } from '../nomad/api.ts';
import { commandFlags } from '../nomad/flags.ts';

const HELP = `usage: berth alloc exec [-task TASK] [-i=false] [-t=false] ALLOC COMMAND [ARGS...]

Runs COMMAND inside TASK of the allocation (TASK may be left out when the group has one task):
for exec tasks inside their chroot, namespaces and user. stdin is passed on unless -i=false. There is no terminal: -t is refused.
Exit codes: the command's own; 1 no such allocation or task, or an error; 2 usage error.`;

type Obj = Record<string, unknown>;

/** `berth alloc exec`. */
export const allocExecCommand: Command = {
  name: 'exec',
  summary: 'run a command inside a running task',
  help: HELP,
  async run(argv, io) {
    // Flags end at the alloc id: everything after it is the command.
    const spec = { ...API_FLAGS, task: 'string', i: 'boolean', t: 'boolean' } as const;
    const takesValue = (a: string) => /^--?[^=]+$/.test(a) && (spec as Record<string, string>)[a.replace(/^--?/, '')] === 'string';
    const idAt = argv.findIndex((a, i) => !a.startsWith('-') && !(i > 0 && takesValue(argv[i - 1]!)));
    const { flags, exit } = commandFlags('alloc exec', idAt < 0 ? argv : argv.slice(0, idAt), spec, { io, help: HELP });
    if (exit !== undefined) return exit;
    if (flags.t === true) throw new UsageError('-t: berth runs commands without a terminal; leave -t off (or give -t=false)', 'alloc exec');
    if (idAt < 0 || argv.length < idAt + 2) throw new UsageError('expects an allocation id and a command', 'alloc exec');
    const api = new AgentApi(flags);
    const a = await api.resolveAlloc(argv[idAt]!);
    const tasks = (((a.Job as Obj).TaskGroups as Obj[]).find((g) => g.Name === a.TaskGroup)!.Tasks as Obj[]).map((t) => String(t.Name));
    const task = (flags.task as string | undefined) ?? (tasks.length === 1 ? tasks[0]! : undefined);
    if (!task) throw new UsageError(`allocation has ${tasks.length} tasks (${tasks.join(', ')}); give -task`, 'alloc exec');
    const q = new URLSearchParams({ task, command: JSON.stringify(argv.slice(idAt + 1)), tty: 'false' });
    const url = api.url(`/v1/client/allocation/${a.ID}/exec?${q}`).href.replace(/^http/, 'ws');
    const ws = new WebSocket(url, api.socketOptions());
    return await new Promise<number>((resolve, reject) => {
      let code: number | undefined;
      ws.on('open', () => {
        if (flags.i === false) return ws.send(JSON.stringify({ stdin: { close: true } }));
        io.stdin.on('data', (c: Buffer) => ws.send(JSON.stringify({ stdin: { data: c.toString('base64') } })));
        io.stdin.on('end', () => ws.send(JSON.stringify({ stdin: { close: true } })));
      });
      ws.on('message', (raw) => {
        const m = JSON.parse(String(raw)) as { stdout?: { data: string }; stderr?: { data: string }; exited?: boolean; result?: { exit_code: number } };
        if (m.stdout?.data) io.stdout.write(Buffer.from(m.stdout.data, 'base64'));
        if (m.stderr?.data) io.stderr.write(Buffer.from(m.stderr.data, 'base64'));
        if (m.exited) code = m.result?.exit_code ?? 0;
      });
      ws.on('close', (c, reason) => (code !== undefined ? resolve(code) : reject(new ApiRequestError(c, `exec ended: ${String(reason) || `code ${c}`}`))));
      ws.on('error', (e) => reject(new ApiRequestError(0, `exec: ${e.message}`)));
    });
  },
};
