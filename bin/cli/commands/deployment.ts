/**
 * `berth deployment list|status`: a job version's rollout, as `nomad deployment` shows it.
 * @module
 */
import { type Command } from '../command.ts';
import { apiCommand } from '../nomad/api-command.ts';
import { monitorEval } from '../job/monitor.ts';
import { writeLine } from '../io.ts';
import { AgentApi, ApiRequestError } from '../nomad/api.ts';
import { deploymentLines } from '../nomad/deployment-view.ts';
import { commandGroup } from '../nomad/group.ts';
import { short, table } from '../nomad/table.ts';

type Obj = Record<string, unknown>;
/** Nomad's `DeploymentUpdateResponse` (the parts read here). */
type Reply = { EvalID: string; RevertedJobVersion?: number | null };

/** The one deployment whose id is `prefix` or starts with it. */
async function resolveDeployment(api: AgentApi, prefix: string): Promise<Obj> {
  const matches = (await api.get<Obj[]>('/v1/deployments')).body.filter((d) => String(d.ID).startsWith(prefix));
  if (matches.length === 0) throw new ApiRequestError(404, `No deployment(s) with prefix or id "${prefix}" found`);
  const d = matches.find((m) => m.ID === prefix) ?? (matches.length === 1 ? matches[0]! : undefined);
  if (!d) throw new ApiRequestError(400, `Prefix matched multiple deployments: ${matches.map((m) => short(m.ID)).join(', ')}`);
  return d;
}

/**
 * `berth deployment <pause|resume|fail|promote>`: one action on a deployment, then (unless
 * `-detach`) the evaluation it made, as nomad's do.
 */
function actionCommand(name: 'pause' | 'resume' | 'fail' | 'promote', summary: string, done: string): Command {
  const groupFlag = name === 'promote' ? ' [-group GROUP]...' : '';
  const groupHelp = name === 'promote' ? ' -group promotes only that task group (repeatable); without it, every group.' : '';
  const help = `usage: berth deployment ${name} [-detach]${groupFlag} DEPLOYMENT\n\n${summary[0]!.toUpperCase()}${summary.slice(1)}. DEPLOYMENT is an id or a unique prefix.${groupHelp}\nExit codes: 0 done; 1 no such deployment, a refusal or an error; 2 usage error.`;
  return apiCommand(
    { command: `deployment ${name}`, summary, help, args: [1, 'expects one deployment id'] },
    { detach: 'boolean', verbose: 'boolean', all: 'boolean', group: 'multi' },
    async ({ flags, positionals, api, io }) => {
      const d = await resolveDeployment(api, positionals[0]!);
      const id = encodeURIComponent(String(d.ID));
      const groups = (flags.group as string[] | undefined) ?? [];
      const { body } =
        name === 'pause' || name === 'resume'
          ? await api.json<Reply>('POST', `/v1/deployment/pause/${id}`, { DeploymentID: d.ID, Pause: name === 'pause' })
          : name === 'promote'
            ? await api.json<Reply>('POST', `/v1/deployment/promote/${id}`, {
                DeploymentID: d.ID,
                All: groups.length === 0,
                Groups: groups.length ? groups : null,
              })
            : await api.json<Reply>('POST', `/v1/deployment/fail/${id}`, { DeploymentID: d.ID });
      // nomad's promote says nothing before monitoring; a fail that reverted names the version.
      if (name === 'fail' && typeof body.RevertedJobVersion === 'number')
        writeLine(io.stdout, `Deployment "${short(d.ID)}" failed. Auto-reverted to job version ${body.RevertedJobVersion}.`);
      else if (name !== 'promote') writeLine(io.stdout, `Deployment "${short(d.ID)}" ${done}`);
      if (body.EvalID && !flags.detach) await monitorEval(api, io, body.EvalID);
      return 0;
    },
  );
}

const LIST_HELP = 'usage: berth deployment list [-json]\n\nExit codes: 0 shown; 1 an error; 2 usage error.';
const STATUS_HELP =
  'usage: berth deployment status [-json] [-verbose] DEPLOYMENT\n\nDEPLOYMENT is an id or a unique prefix; -verbose prints the whole id.\nExit codes: 0 shown; 1 no such deployment or an error; 2 usage error.';

/** `berth deployment`. */
export const deploymentCommand = commandGroup('deployment', 'inspect deployments (the rollouts of job versions)', [
  apiCommand(
    { command: 'deployment list', summary: 'list deployments, newest first', help: LIST_HELP, args: [0, 'takes no arguments'] },
    { json: 'boolean', verbose: 'boolean' },
    async ({ flags, api, io }) => {
      const all = (await api.get<Obj[]>('/v1/deployments')).body.sort((a, b) => Number(b.CreateIndex) - Number(a.CreateIndex));
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
  ),
  apiCommand(
    { command: 'deployment status', summary: 'show a deployment', help: STATUS_HELP, args: [1, 'expects one deployment id'] },
    { json: 'boolean', verbose: 'boolean' },
    async ({ flags, positionals, api, io }) => {
      const d = await resolveDeployment(api, positionals[0]!);
      writeLine(io.stdout, flags.json ? JSON.stringify(d, null, 4) : deploymentLines(d, true, flags.verbose === true));
      return 0;
    },
  ),
  actionCommand('pause', 'pause a rollout: no further batch is placed', 'paused'),
  actionCommand('resume', 'resume a paused rollout', 'resumed'),
  actionCommand('fail', 'mark a rollout as failed: no further batch is placed', 'failed'),
  actionCommand('promote', "promote a rollout's canaries: the rolling update replaces the old allocs", 'promoted'),
]);
