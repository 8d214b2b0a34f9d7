/**
 * `berth job history [-json] [-version N] JOB`: the versions the agent keeps of a job, newest
 * first, each with whether it is stable and when it was submitted, as `nomad job history`.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { ApiRequestError } from '../nomad/api.ts';
import { kv, nanoTime } from '../nomad/table.ts';

const HELP = `usage: berth job history [-json] [-version N] JOB

The versions of JOB the agent keeps, newest first: Version, Stable and Submit Date.
  -json        the versions as JSON
  -version N   only that version
Exit codes: 0 shown; 1 no such job (or version) or an error; 2 usage error.`;

type Obj = Record<string, unknown>;

/** `berth job history`. */
export const jobHistoryCommand = apiCommand(
  { command: 'job history', summary: "list a job's versions", help: HELP, args: [1, 'expects one job id'] },
  { json: 'boolean', version: 'string', p: 'boolean', full: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const version = flags.version as string | undefined;
    if (version !== undefined && !/^\d+$/.test(version)) throw new UsageError('-version takes a number', 'job history');
    const { Versions } = (await api.get<{ Versions: Obj[] }>(`/v1/job/${encodeURIComponent(positionals[0]!)}/versions`)).body;
    const shown = version === undefined ? Versions : Versions.filter((v) => v.Version === Number(version));
    if (shown.length === 0) throw new ApiRequestError(404, `job "${positionals[0]}" has no version ${version}`);
    if (flags.json) {
      writeLine(io.stdout, JSON.stringify(shown, null, 4));
      return 0;
    }
    const blocks = [...shown]
      .sort((a, b) => Number(b.Version) - Number(a.Version))
      .map((v) =>
        kv([
          ['Version', v.Version],
          ['Stable', v.Stable === true],
          ['Submit Date', nanoTime(v.SubmitTime)],
        ]),
      );
    writeLine(io.stdout, blocks.join('\n\n'));
    return 0;
  },
);
