/**
 * P6, snapshot migration: a data dir of M files of 1 MB plus S small files moved between two
 * clients in two processes over loopback HTTP (the sender serves `createSnapshotServer`, the
 * receiver pulls and `restoreSnapshot`s into its own alloc dir; the client-level remote migration
 * in actors/migrate/remote-stream.ts is still a placeholder), beside
 * `tar -cf - . | tar -xf -` between the same directories. Throughput in MB/s of file data.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { benchPath, runNodeScript, sh } from './lib/proc.ts';
import { ratioResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { now } from './lib/stats.ts';

function makeData(dataDir: string, bigFiles: number, smallFiles: number): number {
  mkdirSync(dataDir, { recursive: true });
  const big = randomBytes(1 << 20);
  let bytes = 0;
  for (let i = 0; i < bigFiles; i++) {
    big.writeUInt32LE(i, 0); // distinct contents
    writeFileSync(path.join(dataDir, `big-${i}.bin`), big);
    bytes += big.length;
  }
  const perDir = 1000;
  for (let i = 0; i < smallFiles; i++) {
    const d = path.join(dataDir, `small-${Math.floor(i / perDir)}`);
    if (i % perDir === 0) mkdirSync(d);
    const body = big.subarray(i % 1000, (i % 1000) + 200 + (i % 3800));
    writeFileSync(path.join(d, `f-${i}.txt`), body);
    bytes += body.length;
  }
  return bytes;
}

function startServer(payload: unknown): Promise<{ url: string; stop(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', benchPath('p6-server.ts'), JSON.stringify(payload)], {
      cwd: benchPath('..'),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    lines.once('line', (l) => resolve({ url: (JSON.parse(l) as { url: string }).url, stop: () => (child.stdin!.end(), exited) }));
    child.once('error', reject);
    child.once('exit', (c) => reject(new Error(`snapshot server exited ${c}`)));
  });
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const bigFiles = size(opts, 'p6-mb', 50, 1000);
  const smallFiles = size(opts, 'p6-small', 500, 10_000);
  const dir = tempDir('p6');
  try {
    const src = path.join(dir, 'node-a');
    const dataDir = path.join(src, 'prev', 'alloc', 'data');
    opts.log(`P6 writing ${bigFiles} x 1 MB + ${smallFiles} small files`);
    const bytes = makeData(dataDir, bigFiles, smallFiles);
    await sh('sync');
    const mb = bytes / (1 << 20);

    const floorDst = path.join(dir, 'tar-dst');
    mkdirSync(floorDst);
    const tarMs = await sh(`tar -C ${JSON.stringify(dataDir)} -cf - . | tar -C ${JSON.stringify(floorDst)} -xf -`);
    opts.log(`P6 tar | tar: ${tarMs.toFixed(0)} ms`);
    await sh(`rm -rf ${JSON.stringify(floorDst)}`);
    await sh('sync');

    const token = randomBytes(16).toString('hex');
    const server = await startServer({ clientAllocDir: src, allocId: 'prev', token });
    let r: { ms: number; tarBytes: number };
    const t0 = now();
    try {
      r = await runNodeScript(
        'p6-client.ts',
        { clientAllocDir: path.join(dir, 'node-b'), allocId: 'next', prevAllocId: 'prev', url: server.url, token },
        { onLog: (l) => opts.log(`  [p6] ${l}`), ...(process.env.P6_PROF ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir=' + process.env.P6_PROF] } : {}) },
      );
    } finally {
      await server.stop();
    }
    const wallMs = now() - t0;
    opts.log(`P6 berth: ${r.ms.toFixed(0)} ms in the receiver (${wallMs.toFixed(0)} ms with process start)`);
    const check = await sh(
      `cmp ${JSON.stringify(path.join(dataDir, 'big-7.bin'))} ${JSON.stringify(path.join(dir, 'node-b', 'next', 'alloc', 'data', 'big-7.bin'))}`,
    ).then(
      () => true,
      () => false,
    );
    return [
      ratioResult({
        id: 'P6',
        name: `snapshot migration ${Math.round(mb)} MB (${bigFiles} x 1 MB + ${smallFiles} small) over loopback HTTP`,
        unit: 'MB/s',
        value: mb / (r.ms / 1000),
        floor: mb / (tarMs / 1000),
        better: 'higher',
        limit: 0.8,
        extraTarget: 'data intact',
        extraMet: check,
        details: {
          bytes,
          tarBytes: r.tarBytes,
          berthMs: r.ms,
          berthWallMs: wallMs,
          tarMs,
          api: 'createSnapshotServer + restoreSnapshot in two processes (client-level remote migration not ready)',
        },
      }),
    ];
  } finally {
    await safeRemove(dir);
  }
}
