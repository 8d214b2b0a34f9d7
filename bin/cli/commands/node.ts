/**
 * `berth node status [-json] [ID]`: the agent's node, as `nomad node status` shows it.
 * @module
 */
import {} from '../command.ts';
import { writeLine } from '../io.ts';
import { AgentApi, API_FLAGS } from '../nomad/api.ts';
import { commandFlags } from '../nomad/flags.ts';
import { commandGroup } from '../nomad/group.ts';
import { kv, short, table } from '../nomad/table.ts';

type Obj = Record<string, unknown>;

/** `berth node`. */
export const nodeCommand = commandGroup('node', "show the agent's node", [
  {
    name: 'status',
    summary: 'list nodes, or show one',
    help: 'usage: berth node status [-json] [NODE]\n\nExit codes: 0 shown; 1 an error; 2 usage error.',
    async run(argv, io) {
      const { flags, positionals, exit } = commandFlags(
        'node status',
        argv,
        {
          ...API_FLAGS,
          json: 'boolean',
          self: 'boolean',
          verbose: 'boolean',
        },
        { io, help: this.help, positionals: [0, 1], usage: 'expects at most one node id' },
      );
      if (exit !== undefined) return exit;
      const api = new AgentApi(flags);
      const nodes = (await api.get<Obj[]>('/v1/nodes')).body;
      if (positionals.length === 0 && !flags.self) {
        if (flags.json) writeLine(io.stdout, JSON.stringify(nodes, null, 2));
        else
          writeLine(
            io.stdout,
            table(
              ['ID', 'Node Pool', 'DC', 'Name', 'Class', 'Drain', 'Eligibility', 'Status'],
              nodes.map((n) => [short(n.ID), n.NodePool, n.Datacenter, n.Name, n.NodeClass || '<none>', n.Drain, n.SchedulingEligibility, n.Status]),
            ),
          );
        return 0;
      }
      const id = positionals[0] ?? String(nodes[0]?.ID ?? '');
      const n = (await api.get<Obj>(`/v1/node/${encodeURIComponent(id)}`)).body;
      if (flags.json) {
        writeLine(io.stdout, JSON.stringify(n, null, 2));
        return 0;
      }
      const res = n.NodeResources as { Cpu: { CpuShares: number }; Memory: { MemoryMB: number } };
      writeLine(
        io.stdout,
        kv([
          ['ID', n.ID],
          ['Name', n.Name],
          ['Node Pool', n.NodePool],
          ['Class', '<none>'],
          ['DC', n.Datacenter],
          ['Drain', n.Drain],
          ['Eligibility', n.SchedulingEligibility],
          ['Status', n.Status],
          ['HTTP Address', n.HTTPAddr],
          ['CPU', `${res.Cpu.CpuShares} MHz`],
          ['Memory', `${res.Memory.MemoryMB} MiB`],
          ['Drivers', Object.keys(n.Drivers as Obj).join(',')],
        ]),
      );
      const allocs = (await api.get<Obj[]>(`/v1/node/${n.ID}/allocations`)).body;
      writeLine(
        io.stdout,
        `\nAllocations\n${
          allocs.length
            ? table(
                ['ID', 'Job ID', 'Task Group', 'Version', 'Desired', 'Status'],
                allocs.map((a) => [short(a.ID), a.JobID, a.TaskGroup, (a.Job as Obj | null)?.Version ?? 0, a.DesiredStatus, a.ClientStatus]),
              )
            : 'No allocations placed'
        }`,
      );
      return 0;
    },
  },
]);
