/**
 * `berth status [ID]` without `--data-dir`: nomad's catch-all. No ID: the job list (as
 * `job status`). An ID (or a prefix) is looked up among the agent's jobs, allocations,
 * evaluations, deployments and nodes; one match is shown by its own command, several are
 * listed per kind, none is an error.
 * @module
 */
import { allocStatusCommand } from '../alloc/status.ts';
import { ApiRequestError, AgentApi, API_FLAGS } from '../nomad/api.ts';
import { parseNomadFlags } from '../nomad/flags.ts';
import { writeLine, type CliIO } from '../io.ts';
import { jobStatusCommand } from '../job/status.ts';
import { short } from '../nomad/table.ts';
import { UsageError } from '../errors.ts';
import { deploymentCommand } from './deployment.ts';
import { evalCommand } from './eval.ts';
import { nodeCommand } from './node.ts';

type Obj = Record<string, unknown>;

/** The kinds `status` looks in, in nomad's order, each with how to list its matches. */
const KINDS: Array<{ kind: string; list: (api: AgentApi, prefix: string) => Promise<Obj[]> }> = [
  { kind: 'jobs', list: async (api, p) => (await api.get<Obj[]>(`/v1/jobs?prefix=${encodeURIComponent(p)}`)).body },
  {
    kind: 'allocations',
    list: async (api, p) => (await api.get<Obj[]>(`/v1/allocations?prefix=${encodeURIComponent(p)}`)).body,
  },
  {
    kind: 'evaluations',
    list: async (api, p) => (await api.get<Obj[]>(`/v1/evaluations?prefix=${encodeURIComponent(p)}`)).body,
  },
  {
    kind: 'deployments',
    list: async (api, p) => (await api.get<Obj[]>('/v1/deployments')).body.filter((d) => String(d.ID).startsWith(p)),
  },
  {
    kind: 'nodes',
    list: async (api, p) => (await api.get<Obj[]>('/v1/nodes')).body.filter((n) => String(n.ID).startsWith(p)),
  },
];

/** Runs nomad's `status`. */
export async function agentStatus(argv: string[], io: CliIO): Promise<number> {
  const { flags, positionals } = parseNomadFlags('status', argv, { ...API_FLAGS, json: 'boolean', verbose: 'boolean' });
  if (positionals.length > 1) throw new UsageError('expects at most one id or prefix', 'status');
  const passOn = argv.filter((a) => !positionals.includes(a));
  if (positionals.length === 0) return jobStatusCommand.run(passOn, io);
  const prefix = positionals[0]!;
  const api = new AgentApi(flags);
  const found = await Promise.all(KINDS.map(async (k) => ({ ...k, matches: await k.list(api, prefix) })));
  const hits = found.filter((f) => f.matches.length > 0);
  if (hits.length === 0) throw new ApiRequestError(404, `No matches found for "${prefix}"`);
  const exact = hits.flatMap((h) => h.matches.filter((m) => m.ID === prefix).map((m) => ({ h, m })));
  if (exact.length === 1 || (hits.length === 1 && hits[0]!.matches.length === 1)) {
    const { h, m } = exact[0] ?? { h: hits[0]!, m: hits[0]!.matches[0]! };
    const id = String(m.ID);
    if (h.kind === 'jobs') return jobStatusCommand.run([...passOn, id], io);
    if (h.kind === 'allocations') return allocStatusCommand.run([...passOn, id], io);
    const group = h.kind === 'evaluations' ? evalCommand : h.kind === 'deployments' ? deploymentCommand : nodeCommand;
    return group.run(['status', ...passOn, id], io);
  }
  writeLine(io.stdout, `Prefix matched multiple ${hits.map((h) => h.kind).join(', ')}:`);
  for (const h of hits)
    writeLine(io.stdout, `\n${h.kind[0]!.toUpperCase()}${h.kind.slice(1)}\n${h.matches.map((m) => (h.kind === 'jobs' ? m.ID : short(m.ID))).join('\n')}`);
  return 0;
}
