/**
 * `berth deployment list|status`: a job version's rollout, as `nomad deployment` shows it.
 * @module
 */
import { printHelp } from '../command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { AgentApi, ApiRequestError, API_FLAGS } from '../nomad/api.ts';
import { deploymentLines } from '../nomad/deployment-view.ts';
import { parseNomadFlags } from '../nomad/flags.ts';
import { commandGroup } from '../nomad/group.ts';
import { short, table } from '../nomad/table.ts';

type Obj = Record<string, unknown>;

/** `berth deployment`. */
export const deploymentCommand = commandGroup('deployment', 'inspect deployments (the rollouts of job versions)', [
  {
    name: 'list',
    summary: 'list deployments, newest first',
    help: 'usage: berth deployment list [-json]\n\nExit codes: 0 shown; 1 an error; 2 usage error.',
    async run(argv, io) {
      const { flags, positionals } = parseNomadFlags('deployment list', argv, { ...API_FLAGS, json: 'boolean', verbose: 'boolean' });
      if (flags.help) return printHelp(io, this.help);
      if (positionals.length) throw new UsageError('takes no arguments', 'deployment list');
      const all = (await new AgentApi(flags).get<Obj[]>('/v1/deployments')).body.sort((a, b) => Number(b.CreateIndex) - Number(a.CreateIndex));
      if (flags.json) writeLine(io.stdout, JSON.stringify(all, null, 4));
      else if (all.length === 0) writeLine(io.stdout, 'No deployments found');
      else
        writeLine(
          io.stdout,
          table(
            ['ID', 'Job ID', 'Job Version', 'Status', 'Description'],
            all.map((d) => [flags.verbose ? d.ID : short(d.ID), d.JobID, d.JobVersion, d.Status, d.StatusDescription]),
          ),
        );
      return 0;
    },
  },
  {
    name: 'status',
    summary: 'show a deployment',
    help: 'usage: berth deployment status [-json] DEPLOYMENT\n\nDEPLOYMENT is an id or a unique prefix.\nExit codes: 0 shown; 1 no such deployment or an error; 2 usage error.',
    async run(argv, io) {
      const { flags, positionals } = parseNomadFlags('deployment status', argv, { ...API_FLAGS, json: 'boolean', verbose: 'boolean' });
      if (flags.help) return printHelp(io, this.help);
      if (positionals.length !== 1) throw new UsageError('expects one deployment id', 'deployment status');
      const prefix = positionals[0]!;
      const matches = (await new AgentApi(flags).get<Obj[]>('/v1/deployments')).body.filter((d) => String(d.ID).startsWith(prefix));
      if (matches.length === 0) throw new ApiRequestError(404, `No deployment(s) with prefix or id "${prefix}" found`);
      const d = matches.find((m) => m.ID === prefix) ?? (matches.length === 1 ? matches[0]! : undefined);
      if (!d) throw new ApiRequestError(400, `Prefix matched multiple deployments: ${matches.map((m) => short(m.ID)).join(', ')}`);
      writeLine(io.stdout, flags.json ? JSON.stringify(d, null, 4) : deploymentLines(d, true));
      return 0;
    },
  },
]);
