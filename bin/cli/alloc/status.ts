/**
 * `berth alloc status [-json] ID`: one allocation (id or unique prefix): its fields, who it
 * waits for or preempted, and each task's state with its recent events.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { nowOf, writeLine } from '../io.ts';
import { AgentApi, ApiRequestError } from '../nomad/api.ts';
import { iBytes, kv, nanoTime, table, verboseFormat } from '../nomad/table.ts';
import { allocMetricLines, scoreTable } from '../nomad/alloc-metrics.ts';
import { formatGoDuration } from '../../../index.ts';

const HELP = `usage: berth alloc status [-json] [-verbose] ALLOC

An allocation (its id or a unique prefix): status, placement, preemption, and each task's
state and recent events. -verbose prints whole ids, absolute times and the placement metrics
(nodes evaluated, filtered, exhausted, allocation time, the scores).
Exit codes: 0 shown; 1 no such allocation or an error; 2 usage error.`;

type Obj = Record<string, unknown>;

/** Nomad's words for an alloc's deployment health. */
function deploymentHealth(s: Obj | null): string {
  if (s?.Healthy === true) return 'healthy';
  if (s?.Healthy === false) return 'unhealthy';
  return 'unset';
}

const MiB = 1024 * 1024;

/**
 * Nomad's "Allocation Addresses" block: each of the group's ports, `*label`, dynamic `yes` (nomad
 * writes yes for every shared port), `ip:port`, and `-> to` when the task sees another port.
 */
function allocAddresses(a: Obj): string | undefined {
  const shared = (a.AllocatedResources as { Shared?: { Networks?: Obj[] | null; Ports?: Obj[] | null } } | null)?.Shared;
  const net = shared?.Networks?.[0];
  const ports = shared?.Ports ?? [];
  if (!net || !ports.length) return undefined;
  const rows = ports.map((p) => [`*${String(p.Label)}`, 'yes', `${String(p.HostIP)}:${String(p.Value)}${Number(p.To ?? 0) > 0 ? ` -> ${String(p.To)}` : ''}`]);
  return `Allocation Addresses${net.Mode ? ` (mode = ${JSON.stringify(net.Mode)})` : ''}:\n${table(['Label', 'Dynamic', 'Address'], rows)}`;
}

/**
 * Nomad's "Task Resources" table of one task: CPU (used ticks / asked MHz), memory (used / asked,
 * and `Max:` when memory_max differs), the alloc's disk; empty cells stay blank, as nomad's
 * `formatListWithSpaces` leaves them.
 */
function taskResources(a: Obj, task: string, usage: Obj | undefined): string | undefined {
  const r = (a.TaskResources as Record<string, Obj> | null)?.[task];
  if (!r) return undefined;
  const ru = usage?.ResourceUsage as { CpuStats?: { TotalTicks?: number }; MemoryStats?: { RSS?: number; Usage?: number; Measured?: string[] } } | undefined;
  const cores = Number(r.Cores ?? 0);
  let cpu = String(r.CPU ?? 0);
  if (ru?.CpuStats) cpu = `${Math.floor(ru.CpuStats.TotalTicks ?? 0)}/${cpu}`;
  let mem = iBytes(Number(r.MemoryMB ?? 0) * MiB);
  if (ru?.MemoryStats) {
    const m = ru.MemoryStats;
    const used = m.RSS || m.Measured?.includes('RSS') ? (m.RSS ?? 0) : (m.Usage ?? 0);
    mem = `${iBytes(used)}/${mem}`;
  }
  const max = Number(r.MemoryMaxMB ?? 0);
  const disk = Number((a.Resources as Obj | null)?.DiskMB ?? 0);
  const rows: unknown[][] = [[`${cpu} MHz`, mem, iBytes(disk * MiB), '']];
  if (max !== 0 && max !== Number(r.MemoryMB ?? 0)) rows.push(['', `Max: ${iBytes(max * MiB)}`, '', '']);
  return table([cores > 0 ? `CPU (${cores} cores)` : 'CPU', 'Memory', 'Disk', 'Addresses'], rows, { empty: '' });
}

/** A task state's time as nomad's `formatTaskTimes`: ISO 8601, `N/A` for none. */
function taskTime(t: unknown): string {
  if (typeof t !== 'string' || t === '' || t.startsWith('0001-')) return 'N/A';
  return t.replace(/\.\d+/, '');
}

/** The alloc's check results, by service then name; none for an alloc the client no longer has. */
export async function checkResults(api: AgentApi, allocId: string): Promise<Obj[]> {
  try {
    const { body } = await api.get<Record<string, Obj>>(`/v1/client/allocation/${allocId}/checks`);
    return Object.values(body).sort((x, y) => String(x.Service).localeCompare(String(y.Service)) || String(x.Check).localeCompare(String(y.Check)));
  } catch (e) {
    if (e instanceof ApiRequestError && e.status === 404) return [];
    throw e;
  }
}

/** `berth alloc status`. */
export const allocStatusCommand = apiCommand(
  { command: 'alloc status', summary: 'show an allocation', help: HELP, args: [1, 'expects one allocation id'] },
  { json: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const a = await api.resolveAlloc(positionals[0]!);
    if (flags.json) {
      writeLine(io.stdout, JSON.stringify(a, null, 2));
      return 0;
    }
    const verbose = flags.verbose === true;
    const { id, when } = verboseFormat(verbose, () => nowOf(io));
    const status = a.DeploymentStatus as Obj | null;
    const metrics = (a.Metrics as Obj | null) ?? {};
    const rows: Array<[string, unknown]> = [
      ['ID', a.ID],
      ['Eval ID', id(a.EvalID)],
      ['Name', a.Name],
      ['Node ID', id(a.NodeID)],
      ['Node Name', a.NodeName],
      ['Job ID', a.JobID],
      // The full allocation has no JobVersion: its job's Version is the version it runs (as nomad reads it).
      ['Job Version', (a.Job as Obj | null)?.Version ?? 0],
      ['Client Status', a.ClientStatus],
      ['Client Description', a.ClientDescription],
      ['Desired Status', a.DesiredStatus],
      ['Desired Description', a.DesiredDescription],
      ['Created', when(a.CreateTime)],
      ['Modified', when(a.ModifyTime)],
    ];
    // berth's: who this alloc evicted, or was evicted by (nomad prints these only in the UI).
    if (a.PreviousAllocation) rows.push(['Previous Allocation', id(a.PreviousAllocation)]);
    if ((a.PreemptedAllocations as string[] | null)?.length) rows.push(['Preempted Allocations', (a.PreemptedAllocations as string[]).map(id).join(', ')]);
    if (a.PreemptedByAllocation) rows.push(['Preempted By Allocation', id(a.PreemptedByAllocation)]);
    if (a.DeploymentID) {
      rows.push(['Deployment ID', id(a.DeploymentID)], ['Deployment Health', deploymentHealth(status)]);
      if (status?.Canary === true) rows.push(['Canary', true]);
    }
    if (a.NextAllocation) rows.push(['Replacement Alloc ID', id(a.NextAllocation)]);
    if (verbose)
      rows.push(
        ['Evaluated Nodes', metrics.NodesEvaluated ?? 0],
        ['Filtered Nodes', metrics.NodesFiltered ?? 0],
        ['Exhausted Nodes', metrics.NodesExhausted ?? 0],
        ['Allocation Time', formatGoDuration(Number(metrics.AllocationTime ?? 0) / 1e6)],
        ['Failures', metrics.CoalescedFailures ?? 0],
      );
    writeLine(io.stdout, kv(rows));
    const addresses = allocAddresses(a);
    if (addresses) writeLine(io.stdout, `\n${addresses}`);
    const checks = await checkResults(api, String(a.ID));
    if (checks.length)
      writeLine(
        io.stdout,
        `\nNomad Service Checks:\n${table(
          ['Service', 'Task', 'Name', 'Mode', 'Status'],
          checks.map((c) => [c.Service, c.Task ?? '(group)', c.Check, c.Mode, c.Status]),
        )}`,
      );
    let stats: Record<string, Obj> | undefined;
    try {
      stats = (await api.get<{ Tasks?: Record<string, Obj> }>(`/v1/client/allocation/${encodeURIComponent(String(a.ID))}/stats`)).body.Tasks ?? {};
    } catch (e) {
      writeLine(io.stderr, `Couldn't retrieve stats: ${e instanceof Error ? e.message : String(e)}`);
    }
    for (const [name, t] of Object.entries((a.TaskStates as Record<string, Obj> | null) ?? {})) {
      writeLine(io.stdout, `\nTask "${name}" is "${t.State}"`);
      const resources = taskResources(a, name, stats?.[name]);
      if (resources) writeLine(io.stdout, `Task Resources:\n${resources}\n`);
      writeLine(
        io.stdout,
        `Task Events:\n${kv([
          ['Started At', taskTime(t.StartedAt)],
          ['Finished At', taskTime(t.FinishedAt)],
          ['Total Restarts', t.Restarts ?? 0],
          ['Last Restart', taskTime(t.LastRestart)],
        ])}\n`,
      );
      const events = ((t.Events as Obj[]) ?? []).slice(-10).reverse();
      writeLine(
        io.stdout,
        `Recent Events:\n${table(
          ['Time', 'Type', 'Description'],
          events.map((e) => [nanoTime(e.Time), e.Type, e.DisplayMessage]),
        )}`,
      );
    }
    if (verbose) {
      writeLine(io.stdout, '\nPlacement Metrics');
      const lines = [...allocMetricLines(metrics, '  ')];
      const scores = scoreTable(metrics);
      writeLine(io.stdout, [...lines, ...(scores ? [scores] : [])].join('\n'));
    }
    return 0;
  },
);
