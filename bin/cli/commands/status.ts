/**
 * `berth status --data-dir DIR [alloc] [--json]`: the allocations a client stored in DIR (a list),
 * or one allocation's tasks and recent events, as `nomad alloc status` shows them. Reads the state
 * store read-only, so it works beside a live `berth run --data-dir DIR`.
 * @module
 */
import type { StoredAlloc } from '../../../actors/state/state-store.ts';
import type { Allocation } from '../../../model/types.ts';
import { intFlag, parseCommandArgs, printHelp, type Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { paint, writeLine, type CliIO } from '../io.ts';
import { DATA_DIR_FLAG, findAlloc, readStoredAllocs } from '../state-dir.ts';
import { agentStatus } from './agent-status.ts';

const HELP = `usage: berth status --data-dir DIR [alloc-id] [--json] [--events N]
       berth status [ID]

Without --data-dir, nomad's status against the agent: no ID lists the jobs; an ID (or a
unique prefix) of a job, allocation, evaluation, deployment or node shows it.

Without an alloc id: one line per allocation stored in DIR. With an id (or a unique prefix):
the allocation, each task's state, restarts and its last events (--events, default 10).
  --json  the stored allocation(s) as JSON
Exit codes: 0 shown; 1 no such allocation; 2 usage error or no berth state in DIR.`;

const time = (ms: number | undefined) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) : '-');

function taskSummary(a: Allocation): string {
  return Object.entries(a.taskStates ?? {})
    .map(([name, t]) => `${name}:${t.state}${t.failed ? '(failed)' : ''}`)
    .join(' ');
}

function printList(io: CliIO, all: StoredAlloc[]): void {
  if (!all.length) return writeLine(io.stdout, 'no allocations');
  const rows = all.map(({ alloc: a }) => [a.id.slice(0, 8), a.jobId, a.taskGroup, a.desiredStatus, a.clientStatus, time(a.createTime), taskSummary(a)]);
  const head = ['ID', 'Job', 'Group', 'Desired', 'Status', 'Created', 'Tasks'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows]) writeLine(io.stdout, r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  '));
}

function printOne(io: CliIO, { alloc: a, handles }: StoredAlloc, events: number): void {
  const c = paint(io.color);
  const field = (k: string, v: string) => writeLine(io.stdout, `${k.padEnd(20)}= ${v}`);
  field('ID', a.id);
  if (a.name) field('Name', a.name);
  field('Node ID', a.nodeId);
  field('Job ID', `${a.jobId} (${a.job.type})`);
  field('Task Group', a.taskGroup);
  field('Desired Status', a.desiredStatus);
  field('Client Status', a.clientStatus);
  if (a.clientDescription) field('Client Description', a.clientDescription);
  if (a.previousAllocation) field('Previous Alloc', a.previousAllocation);
  if (a.preemptedAllocations?.length) field('Preempted Allocs', a.preemptedAllocations.join(', '));
  field('Created', time(a.createTime));
  for (const [name, t] of Object.entries(a.taskStates ?? {})) {
    const pid = handles[name]?.pid;
    writeLine(io.stdout, '');
    writeLine(io.stdout, c(1, `Task "${name}" is "${t.state}"${t.failed ? ' (failed)' : ''}`));
    writeLine(io.stdout, `  restarts ${t.restarts}, started ${time(t.startedAt)}, finished ${time(t.finishedAt)}${pid ? `, pid ${pid}` : ''}`);
    const recent = t.events.slice(-events);
    if (recent.length) writeLine(io.stdout, '  Recent Events:');
    for (const e of recent) writeLine(io.stdout, `  ${time(e.time)}  ${e.type.padEnd(18)}  ${e.displayMessage}`);
  }
}

export const statusCommand: Command = {
  name: 'status',
  summary: 'list the allocations in a data dir, or show one',
  help: HELP,
  async run(argv, io) {
    // Without --data-dir it is nomad's `status`, against the agent.
    if (!argv.some((a) => /^--?data-dir(=|$)/.test(a)) && !argv.some((a) => /^--?(h|help)$/.test(a))) return agentStatus(argv, io);
    const { values, positionals } = parseCommandArgs('status', argv, { ...DATA_DIR_FLAG, json: { type: 'boolean' }, events: { type: 'string' } });
    if (values.help) return printHelp(io, HELP);
    if (!values['data-dir']) throw new UsageError('status needs --data-dir DIR', 'status');
    if (positionals.length > 1) throw new UsageError(`status takes at most one alloc id, got ${positionals.length}`, 'status');
    const events = intFlag('status', 'events', values.events, 10);
    const all = readStoredAllocs(values['data-dir']);
    if (positionals[0] === undefined) {
      if (values.json)
        writeLine(
          io.stdout,
          JSON.stringify(
            all.map((s) => s.alloc),
            null,
            2,
          ),
        );
      else printList(io, all);
      return 0;
    }
    const one = findAlloc(all, positionals[0], 'status');
    if (values.json) writeLine(io.stdout, JSON.stringify(one.alloc, null, 2));
    else printOne(io, one, events);
    return 0;
  },
};
