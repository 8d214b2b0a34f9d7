/** A benchmark's server half in its own node process, asked questions over IPC one at a time. @module */
import { fork, type ChildProcess } from 'node:child_process';
import { benchPath } from './proc.ts';

/** A forked `bench/<script>` (tsx, `--expose-gc`) that answers each IPC message with one message. */
export class ServerChild<Hello = unknown> {
  private pending: ((m: unknown) => void) | undefined;
  private exited: Promise<number | null>;

  private constructor(
    readonly proc: ChildProcess,
    readonly hello: Hello,
  ) {
    this.exited = new Promise((r) => proc.once('exit', (code) => r(code)));
    // A send racing the child's exit fails with EPIPE: the exit itself is what callers see.
    proc.on('error', () => {});
    proc.on('message', (m) => {
      const p = this.pending;
      this.pending = undefined;
      p?.(m);
    });
  }

  /** Forks `script` with `payload` (JSON in argv) and resolves with its first message.
   * `BENCH_CPU_PROF=dir` in the environment profiles the child (`--cpu-prof`, written on its exit). */
  static start<H>(script: string, payload: unknown, log: (l: string) => void): Promise<ServerChild<H>> {
    const prof = process.env.BENCH_CPU_PROF;
    const proc = fork(benchPath(script), [JSON.stringify(payload)], {
      execArgv: ['--expose-gc', '--import', 'tsx', ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [])],
      cwd: benchPath('..'),
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    let errTail = '';
    proc.stderr!.on('data', (c: Buffer) => {
      errTail = (errTail + c.toString()).slice(-3000);
      for (const l of c.toString().split('\n')) if (l.trim()) log(`  [${script}] ${l}`);
    });
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${script} exited ${code} before it was ready: ${errTail.trim()}`));
      proc.once('exit', onExit);
      proc.once('message', (m) => {
        proc.off('exit', onExit);
        resolve(new ServerChild<H>(proc, m as H));
      });
    });
  }

  /** Sends `msg` and resolves with the child's next message. */
  ask<T>(msg: unknown): Promise<T> {
    if (this.pending) throw new Error('one question at a time');
    return new Promise<T>((resolve, reject) => {
      const onExit = () => reject(new Error('server child exited'));
      this.proc.once('exit', onExit);
      this.pending = (m) => {
        this.proc.off('exit', onExit);
        resolve(m as T);
      };
      this.proc.send(msg as object);
    });
  }

  /** Asks it to exit (`{ cmd: 'exit' }`), SIGKILL after `ms`. */
  async close(ms = 30_000): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const t = setTimeout(() => this.proc.kill('SIGKILL'), ms);
    if (this.proc.connected) this.proc.send({ cmd: 'exit' }, (err) => err && this.proc.kill('SIGKILL'));
    await this.exited;
    clearTimeout(t);
  }
}
