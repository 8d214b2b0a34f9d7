/** Child processes for benchmarks that need a fresh heap, another user, or a second process. @module */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

/** Absolute path of a file under bench/. */
export const benchPath = (rel: string) => path.join(path.dirname(fileURLToPath(import.meta.url)), '..', rel);

/** Options of {@link runNodeScript}. */
export interface NodeScriptOptions {
  /** Extra node flags (e.g. --expose-gc). */
  nodeArgs?: string[];
  /** Run as this uid/gid through setpriv (supplementary groups cleared). */
  asUser?: { uid: number; gid: number };
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Called with each stderr line (progress). */
  onLog?: (line: string) => void;
  /** Kill the child after this many ms. */
  timeoutMs?: number;
}

/**
 * Runs `bench/<script>` under node with tsx, passing `payload` as JSON in argv, and resolves with
 * the JSON the child prints as its last stdout line. `BENCH_CPU_PROF=dir` in the environment
 * profiles the child (`--cpu-prof`, written on its exit).
 */
export function runNodeScript<T>(script: string, payload: unknown, opts: NodeScriptOptions = {}): Promise<T> {
  // `BENCH_CPU_PROF=dir` profiles the child as ServerChild does (`--cpu-prof` is refused in NODE_OPTIONS).
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const nodeArgv = [...(opts.nodeArgs ?? []), ...prof, '--import', 'tsx', benchPath(script), JSON.stringify(payload)];
  const [cmd, argv] = opts.asUser
    ? ['setpriv', [`--reuid=${opts.asUser.uid}`, `--regid=${opts.asUser.gid}`, '--clear-groups', process.execPath, ...nodeArgv]]
    : [process.execPath, nodeArgv];
  return new Promise<T>((resolve, reject) => {
    const child = spawn(cmd, argv as string[], { cwd: opts.cwd ?? benchPath('..'), env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let errTail = '';
    let partial = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => {
      const text = partial + c.toString();
      const lines = text.split('\n');
      partial = lines.pop()!;
      for (const l of lines) {
        errTail = (errTail + l + '\n').slice(-4000);
        opts.onLog?.(l);
      }
    });
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : undefined;
    child.on('error', reject);
    child.on('close', (code, sig) => {
      if (timer) clearTimeout(timer);
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) return reject(new Error(`${script} exited ${sig ?? code}: ${(errTail + partial).trim().slice(-2000)}`));
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${script}: no JSON result on stdout (got ${JSON.stringify(last.slice(0, 200))})`));
      }
    });
  });
}

/** In a child script: the JSON payload from argv. */
export function childPayload<T>(): T {
  return JSON.parse(process.argv[2] ?? '{}') as T;
}

/** In a child script: print the result and exit. */
export function childDone(result: unknown): void {
  process.stdout.write(JSON.stringify(result) + '\n');
}

/** In a child script: progress to stderr. */
export const childLog = (line: string) => process.stderr.write(line + '\n');

/** Runs a shell command, resolving with its wall time in ms (rejects on failure). */
export function sh(command: string, opts: { cwd?: string } = {}): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd: opts.cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${command}: exit ${code}: ${err.trim().slice(-1000)}`))));
  });
}
