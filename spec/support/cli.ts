/**
 * Running the `berth` command in specs: in-process through `main` (fast; usage, validate, init,
 * status, logs), or as a real child process from the TypeScript sources (run and signals).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { main } from '../../bin/cli/main.ts';

/** The CLI's entry point in the sources. */
export const BERTH_TS = fileURLToPath(new URL('../../bin/berth.ts', import.meta.url));
/** tsx's loader by absolute URL, so a child started in any directory finds it. */
const TSX = import.meta.resolve('tsx');

/** What a command printed and its exit code. */
export interface CliResult {
  code: number | null;
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `berth <argv>` in this process. */
export async function runMain(argv: string[], stdin = '', now?: () => number): Promise<CliResult> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c: Buffer) => (stdout += c.toString()));
  err.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await main(argv, { stdout: out, stderr: err, stdin: Readable.from([stdin]), color: false, ...(now ? { now } : {}) });
  return { code, stdout, stderr };
}

const live = new Set<CliProcess>();

/**
 * Stops every CLI child still running (a failed test's): SIGTERM, so it cleans up after itself,
 * then removes its TMPDIR. For an `afterEach`.
 */
export async function stopCliProcesses(): Promise<void> {
  await Promise.all(
    [...live].map(async (p) => {
      p.child.kill('SIGTERM');
      await p.exited;
      p.leftovers();
    }),
  );
}

/** A `berth` child process with its own TMPDIR; `lines` collects stdout as it comes. */
export class CliProcess {
  readonly child: ChildProcess;
  readonly tmp: string;
  stdout = '';
  stderr = '';
  readonly #waiters: Array<{ re: RegExp; resolve: () => void }> = [];
  readonly exited: Promise<CliResult>;
  /** False when the caller gave the TMPDIR (shared by several children): it is the caller's to remove. */
  readonly #ownsTmp: boolean;

  constructor(argv: string[], opts: { cwd?: string; input?: string; tmp?: string } = {}) {
    this.#ownsTmp = opts.tmp === undefined;
    this.tmp = opts.tmp ?? mkdtempSync(join(tmpdir(), 'berth-cli-tmp-'));
    this.child = spawn(process.execPath, ['--import', TSX, BERTH_TS, ...argv], {
      cwd: opts.cwd ?? this.tmp,
      env: { ...process.env, TMPDIR: this.tmp, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdin!.end(opts.input ?? '');
    this.child.stdout!.on('data', (c: Buffer) => {
      this.stdout += c.toString();
      this.#check();
    });
    this.child.stderr!.on('data', (c: Buffer) => {
      this.stderr += c.toString();
      this.#check();
    });
    live.add(this);
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        live.delete(this);
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      });
    });
  }

  /** Resolves once stdout or stderr matches `re` (rejects if the process exits first). */
  waitFor(re: RegExp): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({ re, resolve });
      this.#check();
      void this.exited.then(() => reject(new Error(`berth exited before printing ${re}\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`)));
    });
  }

  /** Entries left in the child's TMPDIR (after it exited); then removes the dir (when this child made it). */
  leftovers(): string[] {
    if (!this.#ownsTmp || !existsSync(this.tmp)) return [];
    const left = readdirSync(this.tmp).filter((n) => !n.startsWith('tsx-')); // tsx's compile cache
    rmSync(this.tmp, { recursive: true, force: true });
    return left;
  }

  #check(): void {
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const w = this.#waiters[i]!;
      if (w.re.test(this.stdout) || w.re.test(this.stderr)) {
        this.#waiters.splice(i, 1);
        w.resolve();
      }
    }
  }
}

/** Runs `berth <argv>` as a child process to the end. */
export async function runCli(argv: string[], opts: { cwd?: string; input?: string } = {}): Promise<CliResult & { leftovers: string[] }> {
  const p = new CliProcess(argv, opts);
  const r = await p.exited;
  return { ...r, leftovers: p.leftovers() };
}
