/**
 * `berth job dispatch [-meta k=v]... [-idempotency-token T] [-detach] JOB [INPUT]`: runs a
 * parameterized job once, as `nomad job dispatch`: INPUT (a file, or `-` for stdin) is the
 * payload; the dispatched child's evaluation and allocations are followed unless `-detach`.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { apiCommand } from '../nomad/api-command.ts';
import type { Readable } from 'node:stream';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { monitorAndFollow } from './monitor.ts';

const HELP = `usage: berth job dispatch [-meta key=value]... [-idempotency-token TOKEN] [-detach] JOB [INPUT]

Dispatches an instance of the parameterized job JOB: INPUT, a file or - for stdin, is its
payload (at most 16 KiB); -meta sets the dispatch's meta keys. Shows the dispatched job's
evaluation and follows its allocations, unless -detach.
  -meta key=value          a meta key the job's parameterized block requires or permits (repeatable)
  -idempotency-token TOKEN a second dispatch with the same token, while the first lives, makes no new job
  -detach                  print the dispatched job's ID and evaluation and return
Exit codes: 0 dispatched (and its allocations ran); 1 refused or an error; 2 usage error or some
allocations could not be placed.`;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
}

/** `berth job dispatch`. */
export const jobDispatchCommand = apiCommand(
  { command: 'job dispatch', summary: 'dispatch an instance of a parameterized job', help: HELP, args: [[1, 2], 'expects JOB [INPUT]'] },
  { meta: 'multi', 'idempotency-token': 'string', detach: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const meta: Record<string, string> = {};
    for (const kv of (flags.meta as string[] | undefined) ?? []) {
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new UsageError(`-meta expects key=value, got ${JSON.stringify(kv)}`, 'job dispatch');
      meta[kv.slice(0, eq)] = kv.slice(eq + 1);
    }
    const input = positionals[1];
    const payload = input === undefined ? undefined : input === '-' ? await readAll(io.stdin) : await readFile(input);
    const jobId = positionals[0]!;
    const token = flags['idempotency-token'] as string | undefined;
    const { body } = await api.json<{ DispatchedJobID: string; EvalID: string; EvalCreateIndex: number }>(
      'POST',
      `/v1/job/${encodeURIComponent(jobId)}/dispatch${token ? `?idempotency_token=${encodeURIComponent(token)}` : ''}`,
      { JobID: jobId, Meta: meta, ...(payload?.length ? { Payload: payload.toString('base64') } : {}) },
    );
    writeLine(io.stdout, `Dispatched Job ID = ${body.DispatchedJobID}`);
    // A token a live dispatch already carries answers that dispatch, with no new evaluation.
    if (!body.EvalID) return 0;
    writeLine(io.stdout, `Evaluation ID     = ${flags.verbose ? body.EvalID : body.EvalID.slice(0, 8)}`);
    if (flags.detach) return 0;
    writeLine(io.stdout, '');
    return monitorAndFollow(api, io, body.EvalID);
  },
);
