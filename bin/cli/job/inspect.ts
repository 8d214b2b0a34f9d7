/**
 * `berth job inspect [-version N] [-json] JOB`: the job as the agent holds it, as `{"Job": ...}`
 * (nomad's shape, so `berth job run` takes the output back); `-version` picks an older version.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { ApiRequestError } from '../nomad/api.ts';

const HELP = `usage: berth job inspect [-version N] JOB

Prints JOB as the agent holds it, as JSON ({"Job": {...}}: berth job run takes it back).
  -version N   that version of the job (berth job history lists them)
Exit codes: 0 shown; 1 no such job (or version) or an error; 2 usage error.`;

type Obj = Record<string, unknown>;

/** `berth job inspect`. */
export const jobInspectCommand = apiCommand(
  { command: 'job inspect', summary: 'print a job as JSON', help: HELP, args: [1, 'expects one job id'] },
  { version: 'string', json: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const version = flags.version as string | undefined;
    if (version !== undefined && !/^\d+$/.test(version)) throw new UsageError('-version takes a number', 'job inspect');
    const id = encodeURIComponent(positionals[0]!);
    let job: Obj;
    if (version === undefined) job = (await api.get<Obj>(`/v1/job/${id}`)).body;
    else {
      const { Versions } = (await api.get<{ Versions: Obj[] }>(`/v1/job/${id}/versions`)).body;
      const found = Versions.find((v) => v.Version === Number(version));
      if (!found) throw new ApiRequestError(404, `job "${positionals[0]}" has no version ${version}`);
      job = found;
    }
    writeLine(io.stdout, JSON.stringify({ Job: job }, null, 4));
    return 0;
  },
);
