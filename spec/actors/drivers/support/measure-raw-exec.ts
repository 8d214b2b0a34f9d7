/**
 * Measures raw_exec latencies (not part of the spec run):
 *   node --import tsx spec/actors/drivers/support/measure-raw-exec.ts [runs=20]
 * - start(): call -> promise resolved (task spawned, executor ready);
 * - first output: call -> the task's first stdout byte is in its log file;
 * - stop(): call -> task, its group and its executor all gone.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRawExecDriver } from '../../../../actors/drivers/raw-exec.ts';
import type { ProcessHandleState } from '../../../../actors/drivers/executor/process-driver.ts';

const runs = Number(process.argv[2] ?? 20);
const driver = createRawExecDriver();
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-measure-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const gone = (pid: number) => {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^[ZX]/.test(s.slice(s.lastIndexOf(')') + 2));
  } catch {
    return true;
  }
};
const groupGone = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch {
    return true;
  }
};

const startMs: number[] = [];
const firstOutMs: number[] = [];
const stopMs: number[] = [];
for (let i = 0; i < runs + 1; i++) {
  const dir = path.join(base, String(i));
  const logsDir = path.join(dir, 'alloc', 'logs');
  fs.mkdirSync(logsDir, { recursive: true });
  fs.mkdirSync(path.join(dir, 'web'), { recursive: true });
  const seen = new Promise<number>((resolve) => {
    const w = fs.watch(logsDir, () => {
      try {
        if (fs.statSync(path.join(logsDir, 'web.stdout.0')).size > 0) {
          w.close();
          resolve(performance.now());
        }
      } catch {}
    });
  });
  const t0 = performance.now();
  const h = await driver.start(
    {
      id: `a/web/${i}`,
      allocId: 'a',
      taskName: 'web',
      task: { name: 'web', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', 'echo up; exec sleep 1000'] } },
      env: { PATH: '/usr/bin:/bin' },
      taskDir: { dir: path.join(dir, 'web'), localDir: '', secretsDir: '', privateDir: '', tmpDir: '' },
      allocDir: { dir, sharedDir: path.join(dir, 'alloc'), logsDir },
      logs: { maxFiles: 10, maxFileSizeMB: 10 },
      stateDir: path.join(dir, 'state'),
    },
    new AbortController().signal,
  );
  const t1 = performance.now();
  const t2 = await seen;
  const st = h.state as ProcessHandleState;
  const s0 = performance.now();
  await driver.stop(h, 5000, 'SIGINT');
  const s1 = performance.now();
  while (!gone(st.executorPid) || !gone(st.pid) || !groupGone(st.pgid)) await new Promise((r) => setImmediate(r));
  const s2 = performance.now();
  if (i > 0) {
    // the first run warms the caches
    startMs.push(t1 - t0);
    firstOutMs.push(t2 - t0);
    stopMs.push(s2 - s0);
  }
  if (i === 1) console.log(`sample: stop() resolved after ${(s1 - s0).toFixed(1)} ms`);
  await driver.destroy(h, false);
}
fs.rmSync(base, { recursive: true, force: true });
console.log(`raw_exec, ${runs} runs (median, min, max in ms):`);
for (const [name, xs] of [
  ['start() resolved', startMs],
  ['first task output in log', firstOutMs],
  ['stop() to all processes gone', stopMs],
] as const) {
  console.log(`  ${name.padEnd(30)} ${median(xs).toFixed(1)}  (${Math.min(...xs).toFixed(1)} .. ${Math.max(...xs).toFixed(1)})`);
}
