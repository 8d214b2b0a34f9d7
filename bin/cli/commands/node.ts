/**
 * `berth node status [-json] [ID]`: the agent's node, as `nomad node status` shows it.
 * @module
 */
import { nowOf, writeLine } from '../io.ts';
import { apiCommand } from '../nomad/api-command.ts';
import { commandGroup } from '../nomad/group.ts';
import { iBytes, kv, nanoTime, prettyTimeDiff, short, table } from '../nomad/table.ts';

type Obj = Record<string, unknown>;

/** An RFC 3339 time as nomad's `formatTime` prints it; empty for none. */
function timeOf(t: unknown): string {
  if (typeof t !== 'string' || t === '' || t.startsWith('0001-')) return '';
  return t.replace(/\.\d+/, '');
}

/** nomad's `formatEventDetails`: `k: v` pairs, comma-separated. */
function details(d: unknown): string {
  return Object.entries((d as Record<string, string> | null) ?? {})
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
}

/** nomad's `formatAllocList` of full allocations (the version is the job's). */
function nodeAllocTable(allocs: Obj[], verbose: boolean, now: number): string {
  if (!allocs.length) return 'No allocations placed';
  const version = (a: Obj) => (a.Job as Obj | null)?.Version ?? 0;
  if (verbose)
    return table(
      ['ID', 'Eval ID', 'Node ID', 'Task Group', 'Version', 'Desired', 'Status', 'Created', 'Modified'],
      allocs.map((a) => [a.ID, a.EvalID, a.NodeID, a.TaskGroup, version(a), a.DesiredStatus, a.ClientStatus, nanoTime(a.CreateTime), nanoTime(a.ModifyTime)]),
    );
  return table(
    ['ID', 'Node ID', 'Task Group', 'Version', 'Desired', 'Status', 'Created', 'Modified'],
    allocs.map((a) => [
      short(a.ID),
      short(a.NodeID),
      a.TaskGroup,
      version(a),
      a.DesiredStatus,
      a.ClientStatus,
      prettyTimeDiff(a.CreateTime, now),
      prettyTimeDiff(a.ModifyTime, now),
    ]),
  );
}

const STATUS_HELP =
  'usage: berth node status [-json] [-verbose] [NODE]\n\nAs nomad prints it; -verbose adds the drivers, attributes and meta, whole ids and absolute times.\nExit codes: 0 shown; 1 an error; 2 usage error.';

/** `berth node`. */
export const nodeCommand = commandGroup('node', "show the agent's node", [
  apiCommand(
    { command: 'node status', summary: 'list nodes, or show one', help: STATUS_HELP, args: [[0, 1], 'expects at most one node id'] },
    { json: 'boolean', self: 'boolean', verbose: 'boolean' },
    async ({ flags, positionals, api, io }) => {
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
      const verbose = flags.verbose === true;
      const allocs = (await api.get<Obj[]>(`/v1/node/${encodeURIComponent(String(n.ID))}/allocations`)).body;
      const running = allocs.filter((a) => a.ClientStatus === 'running');
      const drivers = (n.Drivers as Record<string, Obj> | null) ?? {};
      const names = (m: unknown) =>
        Object.keys((m as Obj | null) ?? {})
          .sort()
          .join(',');
      const rows: Array<[string, unknown]> = [
        ['ID', n.ID],
        ['Name', n.Name],
        ['Node Pool', n.NodePool],
        ['Class', n.NodeClass],
        ['DC', n.Datacenter],
        ['Drain', n.Drain === true],
        ['Eligibility', n.SchedulingEligibility],
        ['Status', n.Status],
        ['CSI Controllers', names(n.CSIControllerPlugins)],
        ['CSI Drivers', names(n.CSINodePlugins)],
      ];
      if (!verbose)
        rows.push(
          ['Host Volumes', names(n.HostVolumes)],
          ['Host Networks', names(n.HostNetworks)],
          ['CSI Volumes', ''],
          // nomad's outputTruncatedNodeDriverInfo: the detected drivers, sorted, the unhealthy marked.
          [
            'Driver Status',
            Object.entries(drivers)
              .filter(([, d]) => d.Detected === true)
              .map(([name, d]) => (d.Healthy === true ? name : `${name} (unhealthy)`))
              .sort()
              .join(','),
          ],
        );
      writeLine(io.stdout, kv(rows));
      if (verbose)
        writeLine(
          io.stdout,
          `\nDrivers\n${table(
            ['Driver', 'Detected', 'Healthy', 'Message', 'Time'],
            Object.keys(drivers)
              .sort()
              .map((name) => {
                const d = drivers[name]!;
                return [name, d.Detected === true, d.Healthy === true, d.HealthDescription, timeOf(d.UpdateTime)];
              }),
          )}`,
        );
      const events = (n.Events as Obj[] | null) ?? [];
      writeLine(
        io.stdout,
        `\nNode Events\n${table(
          ['Time', 'Subsystem', 'Message', ...(verbose ? ['Details'] : [])],
          [...events].reverse().map((e) => [timeOf(e.Timestamp), e.Subsystem, e.Message, ...(verbose ? [details(e.Details)] : [])]),
        )}`,
      );
      // nomad's getAllocatedResources: the running allocs' totals against what the node offers beyond its reserve.
      const res = n.NodeResources as { Cpu?: { CpuShares?: number }; Memory?: { MemoryMB?: number }; Disk?: { DiskMB?: number } } | null;
      const reserved = n.ReservedResources as { Cpu?: { CpuShares?: number }; Memory?: { MemoryMB?: number }; Disk?: { DiskMB?: number } } | null;
      const total = (f: (r: NonNullable<typeof res>) => number | undefined) => (f(res ?? {}) ?? 0) - (f(reserved ?? {}) ?? 0);
      const used = (k: 'CPU' | 'MemoryMB' | 'DiskMB') => running.reduce((sum, a) => sum + Number((a.Resources as Obj | null)?.[k] ?? 0), 0);
      const MB = 1024 * 1024;
      writeLine(
        io.stdout,
        `\nAllocated Resources\n${table(
          ['CPU', 'Memory', 'Disk', 'Alloc Count'],
          [
            [
              `${used('CPU')}/${total((r) => r.Cpu?.CpuShares)} MHz`,
              `${iBytes(used('MemoryMB') * MB)}/${iBytes(total((r) => r.Memory?.MemoryMB) * MB)}`,
              `${iBytes(used('DiskMB') * MB)}/${iBytes(total((r) => r.Disk?.DiskMB) * MB)}`,
              Number(n.NodeMaxAllocs ?? 0) ? `${running.length}/${n.NodeMaxAllocs}` : running.length,
            ],
          ],
        )}`,
      );
      writeLine(io.stdout, `\nAllocations\n${nodeAllocTable(allocs, verbose, nowOf(io))}`);
      if (verbose) {
        const attrs = (n.Attributes as Record<string, string> | null) ?? {};
        writeLine(
          io.stdout,
          `\nAttributes\n${kv(
            Object.keys(attrs)
              .sort()
              .map((k) => [k, attrs[k]]),
          )}`,
        );
        const meta = (n.Meta as Record<string, string> | null) ?? {};
        const keys = Object.keys(meta).sort();
        writeLine(io.stdout, `\nMeta\n${keys.length ? kv(keys.map((k) => [k, meta[k]])) : ''}`);
      }
      return 0;
    },
  ),
]);
