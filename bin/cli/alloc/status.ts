/**
 * `berth alloc status [-json] ID`: one allocation (id or unique prefix): its fields, who it
 * waits for or preempted, and each task's state with its recent events.
 * @module
 */
import { type Command } from '../command.ts';
import { writeLine } from '../io.ts';
import { AgentApi, ApiRequestError, API_FLAGS } from '../nomad/api.ts';
import { commandFlags } from '../nomad/flags.ts';
import { kv, nanoTime, short, table } from '../nomad/table.ts';

const HELP = `usage: berth alloc status [-json] ALLOC

An allocation (its id or a unique prefix): status, placement, preemption, and each task's
state and recent events.
Exit codes: 0 shown; 1 no such allocation or an error; 2 usage error.`;

type Obj = Record<string, unknown>;

/** Nomad's words for an alloc's deployment health. */
function deploymentHealth(s: Obj | null): string {
  if (s?.Healthy === true) return 'healthy';
  if (s?.Healthy === false) return 'unhealthy';
  return 'unset';
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
export const allocStatusCommand: Command = {
  name: 'status',
  summary: 'show an allocation',
  help: HELP,
  async run(argv, io) {
    const { flags, positionals, exit } = commandFlags(
      'alloc status',
      argv,
      {
        ...API_FLAGS,
        json: 'boolean',
        verbose: 'boolean',
      },
      { io, help: HELP, positionals: 1, usage: 'expects one allocation id' },
    );
    if (exit !== undefined) return exit;
    const api = new AgentApi(flags);
    const a = await api.resolveAlloc(positionals[0]!);
    if (flags.json) {
      writeLine(io.stdout, JSON.stringify(a, null, 2));
      return 0;
    }
    writeLine(
      io.stdout,
      kv([
        ['ID', a.ID],
        ['Eval ID', short(a.EvalID)],
        ['Name', a.Name],
        ['Node ID', short(a.NodeID)],
        ['Node Name', a.NodeName],
        ['Job ID', a.JobID],
        // The full allocation has no JobVersion: its job's Version is the version it runs (as nomad reads it).
        ['Job Version', (a.Job as Obj | null)?.Version ?? 0],
        ['Client Status', a.ClientStatus],
        ['Client Description', a.ClientDescription],
        ['Desired Status', a.DesiredStatus],
        ['Desired Description', a.DesiredDescription],
        ['Created', nanoTime(a.CreateTime)],
        ['Modified', nanoTime(a.ModifyTime)],
        ...((a.PreviousAllocation ? [['Previous Allocation', short(a.PreviousAllocation)]] : []) as Array<[string, unknown]>),
        ...(((a.PreemptedAllocations as string[] | null)?.length
          ? [['Preempted Allocations', (a.PreemptedAllocations as string[]).map(short).join(', ')]]
          : []) as Array<[string, unknown]>),
        ...((a.PreemptedByAllocation ? [['Preempted By Allocation', short(a.PreemptedByAllocation)]] : []) as Array<[string, unknown]>),
        ...((a.DeploymentID
          ? [
              ['Deployment ID', short(a.DeploymentID)],
              ['Deployment Health', deploymentHealth(a.DeploymentStatus as Obj | null)],
            ]
          : []) as Array<[string, unknown]>),
      ]),
    );
    const checks = await checkResults(api, String(a.ID));
    if (checks.length)
      writeLine(
        io.stdout,
        `\nNomad Service Checks:\n${table(
          ['Service', 'Task', 'Name', 'Mode', 'Status'],
          checks.map((c) => [c.Service, c.Task ?? '(group)', c.Check, c.Mode, c.Status]),
        )}`,
      );
    for (const [name, t] of Object.entries((a.TaskStates as Record<string, Obj> | null) ?? {})) {
      writeLine(io.stdout, `\nTask "${name}" is "${t.State}"`);
      const events = ((t.Events as Obj[]) ?? []).slice(-10).reverse();
      writeLine(
        io.stdout,
        `Recent Events:\n${table(
          ['Time', 'Type', 'Description'],
          events.map((e) => [nanoTime(e.Time), e.Type, e.DisplayMessage]),
        )}`,
      );
    }
    return 0;
  },
};
