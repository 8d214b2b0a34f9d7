/** Shared fixtures for the raw_exec / exec driver specs: temp dirs, task configs, cleanup. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Driver, TaskConfig, TaskHandle } from '../../../../actors/drivers/driver.ts';
import type { Task } from '../../../../model/types.ts';
import { readTaskLogs } from '../../../../actors/drivers/logs/reader.ts';

export interface Sandbox {
  base: string;
  config(task: Partial<Task> & { config: Record<string, unknown> }, extra?: Partial<TaskConfig>): TaskConfig;
  logsDir: string;
}

const created: string[] = [];
const started: Array<{ driver: Driver; handle: TaskHandle }> = [];

/** A fresh alloc-like layout under a temp dir (short path: socket paths stay under 107 bytes). */
export function sandbox(taskName = 'web'): Sandbox {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-drv-'));
  created.push(base);
  const allocDir = { dir: base, sharedDir: path.join(base, 'alloc'), logsDir: path.join(base, 'alloc', 'logs') };
  const t = path.join(base, taskName);
  const taskDir = {
    dir: t,
    localDir: path.join(t, 'local'),
    secretsDir: path.join(t, 'secrets'),
    privateDir: path.join(t, 'private'),
    tmpDir: path.join(t, 'tmp'),
  };
  for (const d of [allocDir.logsDir, taskDir.localDir, taskDir.secretsDir, taskDir.privateDir, taskDir.tmpDir]) fs.mkdirSync(d, { recursive: true });
  let n = 0;
  return {
    base,
    logsDir: allocDir.logsDir,
    config(task, extra = {}) {
      n += 1;
      const full: Task = { name: taskName, driver: 'raw_exec', ...task };
      return {
        id: `alloc-1/${taskName}/${n}`,
        allocId: 'alloc-1',
        taskName,
        task: full,
        env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
        taskDir,
        allocDir,
        logs: { maxFiles: 10, maxFileSizeMB: 10 },
        stateDir: path.join(base, 'state'),
        ...extra,
      };
    },
  };
}

/** A `/bin/sh -c script` task. */
export const sh = (script: string, more: Partial<Task> = {}) => ({ config: { command: '/bin/sh', args: ['-c', script] }, ...more });

/** Starts and remembers the handle for {@link cleanup}. */
export async function startTracked(driver: Driver, config: TaskConfig): Promise<TaskHandle> {
  const handle = await driver.start(config, new AbortController().signal);
  started.push({ driver, handle });
  return handle;
}

export function track(driver: Driver, handle: TaskHandle): void {
  started.push({ driver, handle });
}

/** Kills every task started through {@link startTracked} and removes every sandbox. */
export async function cleanup(): Promise<void> {
  for (const { driver, handle } of started.splice(0)) {
    try {
      await driver.destroy(handle, true);
    } catch {}
  }
  for (const dir of created.splice(0)) {
    try {
      execFileSync('umount', ['-R', '-l', dir], { stdio: 'ignore' });
    } catch {}
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Alive and not a zombie (orphans may wait a while to be reaped by the container's init). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

/** Reads the task's log (following) until `pred(text)` holds; rejects after `timeoutMs`. */
export async function logUntil(logsDir: string, task: string, stream: 'stdout' | 'stderr', pred: (text: string) => boolean, timeoutMs = 5000): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  let text = '';
  for await (const chunk of readTaskLogs(logsDir, task, stream, { follow: true, signal })) {
    text += chunk.toString('utf8');
    if (pred(text)) return text;
  }
  throw new Error(`log ${task}.${stream} never matched within ${timeoutMs} ms; got ${JSON.stringify(text.slice(-300))}`);
}

/** Polls a condition on /proc or cgroupfs (there is no event for another process' death). */
export { until } from '../../../support/until.ts';

/**
 * A minimal chroot in `root`: the given binaries and their shared libraries, hard-linked
 * (real files, so symlinks like /bin -> usr/bin on the host do not matter).
 */
export function buildMiniChroot(root: string, binaries: string[]): void {
  for (const bin of binaries) {
    const libs = execFileSync('ldd', [bin], { encoding: 'utf8' }).match(/\/[^\s]+/g) ?? [];
    for (const f of [bin, ...libs]) {
      const dest = path.join(root, f);
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      if (fs.existsSync(dest)) continue;
      const real = fs.realpathSync(f);
      try {
        fs.linkSync(real, dest);
      } catch {
        fs.copyFileSync(real, dest);
        fs.chmodSync(dest, fs.statSync(real).mode);
      }
    }
  }
}

export const ABORT = () => new AbortController().signal;
