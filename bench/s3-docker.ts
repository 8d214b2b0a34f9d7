/**
 * S3, the docker driver on a real Engine (busybox imported, no registry):
 * - start: `client.addAlloc` of a one-task docker alloc → its task `running` (alloc dir, create,
 *   start, log copy attached), median of R rounds, against the Engine's own create + start of the
 *   same container (image, command, memory, binds) through its API; target <= 1.2x;
 * - memory: what a running docker task adds to the process's heap over a running mock task (K of
 *   each at once, after full GCs): the log copies and the Engine's
 *   streams berth holds per container; target <= 1 MiB per container.
 * Skipped, with the reason, where no Engine answers.
 */
import { randomUUID } from 'node:crypto';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createClient } from '../actors/client/client.ts';
import { shutdownMountHelper } from '../actors/allocdir/mounts.ts';
import type { Allocation, Task } from '../model/types.ts';
import { engine, engineAnswers, importBusybox, removeImage } from '../spec/support/docker.ts';
import { waitTasksRunning } from './lib/allocs.ts';
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { NO_GC } from './lib/no-gc.ts';
import { absoluteResult, ratioResult, size, skipped, type BenchOptions, type BenchResult } from './lib/results.ts';
import { median, now } from './lib/stats.ts';

const SCRIPT = 'trap "exit 0" TERM; while :; do sleep 1; done';

function alloc(task: Task): Allocation {
  return {
    id: randomUUID(),
    nodeId: 'node-1',
    jobId: 's3',
    job: { id: 's3', name: 's3', type: 'service', taskGroups: [{ name: 'g', count: 1, tasks: [task] }] },
    taskGroup: 'g',
    desiredStatus: 'run',
    clientStatus: 'pending',
    allocModifyIndex: 1,
  };
}

const dockerTask = (image: string): Task => ({
  name: 't',
  driver: 'docker',
  config: { image, command: 'sh', args: ['-c', SCRIPT] },
  resources: { cpu: 100, memoryMB: 64 },
  killTimeoutMs: 1000,
});

// A full GC before each reading, with or without --expose-gc (the flag can be set at run time
// and the function taken from a fresh context).
v8.setFlagsFromString('--expose-gc');
const fullGc = (globalThis as { gc?: () => void }).gc ?? (vm.runInNewContext('gc') as () => void);
const heap = () => {
  fullGc();
  return process.memoryUsage().heapUsed;
};

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  if (!(await engineAnswers())) return [skipped('S3', 'docker task start and memory', 'no Docker Engine answers at /var/run/docker.sock')];
  const rounds = size(opts, 's3-rounds', 5, 20);
  const k = size(opts, 's3-k', 10, 30);
  const image = await importBusybox('berth-bench-busybox');
  const dir = tempDir('s3');
  // Image GC off: the rounds reuse the image, and a removal racing a start would measure the GC.
  const client = createClient({
    dataDir: dir,
    ...NO_GC,
    docker: { plugin: { gc: { image: false, imageDelayMs: 0, container: true, danglingContainers: false, danglingCreationGraceMs: 0 } } },
  });
  try {
    const berthMs: number[] = [];
    const engineMs: number[] = [];
    for (let i = 0; i <= rounds; i++) {
      // Round 0 warms both paths up and is not counted.
      const t0 = now();
      const r = client.addAlloc(alloc(dockerTask(image)));
      await waitTasksRunning(r);
      const t1 = now();
      await r.destroy();
      const t2 = now();
      const c = await engine.createContainer({
        name: `berth-bench-floor-${randomUUID().slice(0, 8)}`,
        Image: image,
        Cmd: ['sh', '-c', SCRIPT],
        HostConfig: { Memory: 64 * 2 ** 20, MemorySwap: 64 * 2 ** 20, CpuShares: 100, Binds: [`${dir}:/alloc`] },
      });
      await c.start();
      const t3 = now();
      await c.remove({ force: true });
      if (i === 0) continue;
      berthMs.push(t1 - t0);
      engineMs.push(t3 - t2);
    }
    opts.log(`S3 docker start: berth ${median(berthMs).toFixed(0)} ms, Engine create+start ${median(engineMs).toFixed(0)} ms (median of ${rounds})`);

    const perTask = async (task: () => Task): Promise<number> => {
      const before = heap();
      const runners = [];
      for (let i = 0; i < k; i++) runners.push(client.addAlloc(alloc(task())));
      await Promise.all(runners.map((r) => waitTasksRunning(r)));
      const per = (heap() - before) / k;
      await Promise.all(runners.map((r) => r.destroy()));
      return per;
    };
    const mockPer = await perTask(() => ({ name: 't', driver: 'mock_driver', config: { run_for: '1h' } }));
    const dockerPer = await perTask(() => dockerTask(image));
    opts.log(`S3 heap per running task: docker ${(dockerPer / 1024).toFixed(0)} KiB, mock ${(mockPer / 1024).toFixed(0)} KiB (K = ${k})`);
    return [
      ratioResult({
        id: 'S3',
        name: `docker task start (addAlloc -> running) vs the Engine's create + start, median of ${rounds}`,
        unit: 'ms',
        value: median(berthMs),
        floor: median(engineMs),
        better: 'lower',
        limit: 1.2,
      }),
      absoluteResult({
        id: 'S3',
        name: `heap a running docker task adds over a mock task (log copies, Engine streams), vs a mock task's whole alloc, K = ${k}`,
        unit: 'KiB',
        value: Math.max(0, dockerPer - mockPer) / 1024,
        floor: mockPer / 1024,
        better: 'lower',
        limit: 1024,
        details: { dockerPerTaskKiB: dockerPer / 1024, mockPerTaskKiB: mockPer / 1024 },
      }),
    ];
  } finally {
    await client.shutdown();
    await shutdownMountHelper();
    await safeRemove(dir);
    await removeImage(image);
  }
}
