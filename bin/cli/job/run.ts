/**
 * `berth job run FILE [-detach] [-var k=v]... [-check-index N] [-json]`: registers the job with
 * the agent, prints the evaluation (placements, preemptions, what could not be placed), then
 * follows the new allocations until they run, unless `-detach`.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { nextOfAny } from '../../../agent/periodic/cron.ts';
import { followAllocs, followDeployment, monitorEval } from './monitor.ts';
import { loadCommandJob } from './job-file.ts';

const HELP = `usage: berth job run [-detach] [-var key=value]... [-var-file FILE]... [-check-index N] [-unsupported warn] FILE

Registers the job in FILE (HCL2 or JSON) with the agent, shows the evaluation (placements,
preemptions, placement failures), then follows the new allocations until they run (a batch
job's: until they end), printing which allocations each one waits for.
  -detach          print the evaluation id and return at once
  -var key=value   a value for the job file's variable (repeatable)
  -var-file FILE   variable values from an HCL or JSON file (repeatable)
  -unsupported warn  leave out (with a warning) the stanzas berth does not run, instead of
                   refusing the job; a task whose driver berth lacks is refused either way
  -check-index N   register only if the job's modify index is N (0: only if it is new)
  -json            print the job as the API receives it (before the agent fills
                   in Nomad's defaults), register nothing
Exit codes: 0 placed and running; 1 error or an allocation failed; 2 usage or input error,
or some allocations could not be placed.`;

/** `berth job run`. */
export const jobRunCommand = apiCommand(
  { command: 'job run', summary: 'register a job and follow its allocations', help: HELP, args: [1, 'expects one job file'] },
  { detach: 'boolean', var: 'multi', 'var-file': 'multi', 'check-index': 'string', json: 'boolean', verbose: 'boolean', unsupported: 'string' },
  async ({ flags, positionals, api, io }) => {
    // As nomad sends it: the agent fills in the defaults, and says what it changes.
    const job = await loadCommandJob('job run', positionals[0]!, flags, io, { canonicalize: false });
    if (flags.json) {
      writeLine(io.stdout, JSON.stringify({ Job: job }, null, 2));
      return 0;
    }
    const checkIndex = flags['check-index'];
    if (checkIndex !== undefined && !/^\d+$/.test(checkIndex as string)) throw new UsageError('-check-index takes a number', 'job run');
    const { body } = await api.json<{ EvalID: string; Warnings: string }>('POST', '/v1/jobs', {
      Job: job,
      ...(checkIndex !== undefined ? { EnforceIndex: true, JobModifyIndex: Number(checkIndex) } : {}),
    });
    // As nomad prints them: on stdout, a blank line after.
    if (body.Warnings) writeLine(io.stdout, `Job Warnings:\n${body.Warnings}\n`);
    // A parameterized or periodic job has no evaluation of its own (its children do), as nomad says.
    if (!body.EvalID) {
      writeLine(io.stdout, 'Job registration successful');
      const periodic = job.Periodic as { Spec?: string; Specs?: string[]; TimeZone?: string; Enabled?: boolean } | undefined;
      const next =
        periodic && periodic.Enabled !== false
          ? nextOfAny([...(periodic.Spec ? [periodic.Spec] : []), ...(periodic.Specs ?? [])], Date.now(), periodic.TimeZone)
          : undefined;
      if (next !== undefined)
        writeLine(io.stdout, `Approximate next launch time: ${new Date(next).toISOString()} (${Math.round((next - Date.now()) / 1000)}s from now)`);
      return 0;
    }
    if (flags.detach) {
      writeLine(io.stdout, `Job registration successful\nEvaluation ID: ${body.EvalID}`);
      return 0;
    }
    const outcome = await monitorEval(api, io, body.EvalID);
    const ok = await followAllocs(api, io, outcome.placed, outcome.createIndex - 1);
    if (!ok) return 1;
    // A rolling update goes on in later batches: follow its deployment to the end.
    const deployment = await followDeployment(api, io, String(job.ID), outcome.placed);
    if (deployment === 'failed') return 1;
    return outcome.failed ? 2 : 0;
  },
);
