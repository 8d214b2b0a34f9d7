/**
 * `npm run corpus -- --run`: every corpus file that parses is registered on a real `berth agent
 * -dev` (a child process on a free port, its data in a temp dir) and watched until it runs, fails,
 * stays queued or the time is up; then purged. One outcome per file:
 *
 * - `ran`: every alloc of the job reached running (or complete);
 * - `failed: <why>`: an alloc failed (its last task event says why: an image pull, a command not found);
 * - `queued: <why>`: no alloc was placed (the evaluation's filter and exhaustion metrics);
 * - `waits`: periodic or parameterized, so nothing runs until it is launched or dispatched;
 * - `pending`: allocs placed but not all running when the time ran out.
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseJobspec } from '../agent/jobspec/index.ts';

/** `-var` / `name=value` line pairs to `-var` values. */
export function cliVars(text: string): Record<string, string> {
  const lines = text.split('\n');
  const out: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '-var') continue;
    const kv = lines[++i] ?? '';
    const eq = kv.indexOf('=');
    if (eq > 0) out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

/** One parsed file's outcome on the agent. */
export interface RunResult {
  file: string;
  outcome: 'ran' | 'failed' | 'queued' | 'waits' | 'pending';
  detail: string;
}

const repo = resolve(import.meta.dirname, '..');

/** A `berth agent -dev` child on a free port, in a temp dir of its own. */
async function startAgent(): Promise<{ url: string; child: ChildProcess; tmp: string }> {
  const tmp = mkdtempSync(join(tmpdir(), 'berth-corpus-agent-'));
  const child = spawn(process.execPath, ['--import', 'tsx', join(repo, 'bin', 'berth.ts'), 'agent', '-dev', '-port', '0'], {
    cwd: repo,
    env: { ...process.env, TMPDIR: tmp, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    const timer = setTimeout(() => rej(new Error(`the agent did not listen within 30 s: ${out.slice(-500)}`)), 30_000);
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (c: string) => {
      out += c;
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
    child.stderr!.resume();
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`the agent exited (${code}) before listening: ${out.slice(-500)}`));
    });
  });
  return { url, child, tmp };
}

/** Stops the agent (it destroys what runs on the way out) and removes its temp dir. */
async function stopAgent(a: { child: ChildProcess; tmp: string }): Promise<void> {
  if (a.child.exitCode === null) {
    const exited = new Promise((r) => a.child.once('exit', r));
    a.child.kill('SIGINT');
    const timer = setTimeout(() => a.child.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(a.tmp, { recursive: true, force: true });
}

/** One request, on a connection of its own (nothing pooled outlives the run). */
function api<T = unknown>(url: string, method: string, path: string, body?: unknown): Promise<T> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((res, rej) => {
    const req = httpRequest(`${url}${path}`, { method, agent: false, headers: data ? { 'content-type': 'application/json' } : {} }, (r) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => (text += c));
      r.on('end', () => {
        if ((r.statusCode ?? 500) >= 300) rej(new Error(`${method} ${path}: ${r.statusCode} ${text.trim().slice(0, 200)}`));
        else {
          try {
            res((text ? JSON.parse(text) : undefined) as T);
          } catch (e) {
            rej(e as Error);
          }
        }
      });
    });
    req.on('error', rej);
    req.end(data);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The fields of Nomad's API objects read here. */
interface ApiEvent {
  DisplayMessage?: string;
  DriverError?: string;
  SetupError?: string;
  DownloadError?: string;
  FailsTask?: boolean;
}
interface ApiAlloc {
  ID: string;
  Name: string;
  ClientStatus: string;
  ClientDescription?: string;
  TaskStates?: Record<string, { Failed?: boolean; Events?: ApiEvent[] }>;
}
type Counts = Record<string, number>;
interface ApiEval {
  CreateIndex?: number;
  FailedTGAllocs?: Record<string, { ConstraintFiltered?: Counts; DimensionExhausted?: Counts; ClassFiltered?: Counts }>;
}

/** Why no alloc was placed, from the job's latest evaluation. */
function queuedReason(evals: ApiEval[]): string {
  const ev = [...evals].sort((a, b) => (b.CreateIndex ?? 0) - (a.CreateIndex ?? 0)).find((e) => e.FailedTGAllocs);
  if (!ev) return 'no alloc placed';
  const parts: string[] = [];
  for (const [tg, m] of Object.entries(ev.FailedTGAllocs ?? {})) {
    const why = [
      ...Object.entries(m.ConstraintFiltered ?? {}).map(([c, n]) => `constraint ${c} filtered ${n}`),
      ...Object.entries(m.DimensionExhausted ?? {}).map(([d, n]) => `${d} exhausted on ${n}`),
      ...Object.entries(m.ClassFiltered ?? {}).map(([c, n]) => `class ${c} filtered ${n}`),
    ];
    parts.push(`${tg}: ${why.join(', ') || 'not placed'}`);
  }
  return parts.join('; ');
}

/** The event that tells most: the last driver, setup or download failure, else the last that fails the task, else the last. */
function telling(all: ApiEvent[]): ApiEvent | undefined {
  const events = all.filter((e) => e.DisplayMessage);
  return events.filter((e) => e.DriverError || e.SetupError || e.DownloadError).at(-1) ?? events.filter((e) => e.FailsTask).at(-1) ?? events.at(-1);
}

/** The last event of a failed alloc's tasks, as `task: message`. */
function failure(alloc: ApiAlloc): string {
  for (const [task, st] of Object.entries(alloc.TaskStates ?? {})) {
    if (!st.Failed) continue;
    const ev = telling(st.Events ?? []);
    if (ev) return `${task}: ${ev.DisplayMessage}`;
  }
  return alloc.ClientDescription || 'failed';
}

/** What a pending alloc's tasks said last, as ` (task: message)`, or nothing. */
function lastWord(alloc: ApiAlloc): string {
  const said = Object.entries(alloc.TaskStates ?? {})
    .map(([task, st]) => [task, telling(st.Events ?? [])?.DisplayMessage] as const)
    .filter(([, m]) => m)
    .map(([task, m]) => `${task}: ${m}`);
  return said.length ? ` (${said.join('; ')})` : '';
}

/** Registers one job on the agent and watches it for up to `timeoutMs`. */
async function runOne(url: string, dir: string, file: string, timeoutMs: number): Promise<RunResult> {
  const path = join(dir, file);
  const vars = existsSync(`${path}.vars`) ? cliVars(readFileSync(`${path}.vars`, 'utf8')) : {};
  const job = await parseJobspec(readFileSync(path, 'utf8'), { filename: path, vars });
  const j = job as { ID?: string; Namespace?: string; Periodic?: unknown; ParameterizedJob?: unknown };
  const id = encodeURIComponent(j.ID ?? '');
  const ns = j.Namespace && j.Namespace !== 'default' ? `?namespace=${encodeURIComponent(j.Namespace)}` : '';
  const q = (p: string) => `${p}${ns ? (p.includes('?') ? `&${ns.slice(1)}` : ns) : ''}`;
  try {
    await api(url, 'POST', q('/v1/jobs'), { Job: job });
  } catch (e) {
    return { file, outcome: 'failed', detail: `register: ${(e as Error).message}` };
  }
  try {
    if (j.Periodic || j.ParameterizedJob) return { file, outcome: 'waits', detail: j.Periodic ? 'periodic' : 'parameterized' };
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const allocs = await api<ApiAlloc[]>(url, 'GET', q(`/v1/job/${id}/allocations`));
      const full = await Promise.all(allocs.map((a) => api<ApiAlloc>(url, 'GET', q(`/v1/allocation/${a.ID}`))));
      const failed = full.find((a) => a.ClientStatus === 'failed' || a.ClientStatus === 'lost');
      if (failed) return { file, outcome: 'failed', detail: failure(failed) };
      if (full.length && full.every((a) => a.ClientStatus === 'running' || a.ClientStatus === 'complete')) return { file, outcome: 'ran', detail: '' };
      if (Date.now() >= deadline) {
        if (!full.length) return { file, outcome: 'queued', detail: queuedReason(await api<ApiEval[]>(url, 'GET', q(`/v1/job/${id}/evaluations`))) };
        return { file, outcome: 'pending', detail: full.map((a) => `${a.Name} ${a.ClientStatus}${lastWord(a)}`).join(', ') };
      }
      await sleep(250);
    }
  } finally {
    await api(url, 'DELETE', q(`/v1/job/${id}?purge=true`)).catch(() => undefined);
  }
}

/** Runs every parsed file of `parsed` on one agent, in order. */
export async function runOnAgent(
  dir: string,
  parsed: ReadonlyArray<{ file: string; outcome: string }>,
  opts: { timeoutMs?: number; log?: (r: RunResult) => void } = {},
): Promise<RunResult[]> {
  const agent = await startAgent();
  const out: RunResult[] = [];
  try {
    for (const r of parsed.filter((p) => p.outcome === 'parsed')) {
      const res = await runOne(agent.url, dir, r.file, opts.timeoutMs ?? 20_000).catch((e: Error) => ({
        file: r.file,
        outcome: 'failed' as const,
        detail: e.message,
      }));
      opts.log?.(res);
      out.push(res);
    }
  } finally {
    await stopAgent(agent);
  }
  return out;
}
