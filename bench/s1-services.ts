/**
 * S1, service jobs: (a) an artifact (a tar.gz of many small files) fetched over loopback HTTP,
 * checksummed and unpacked through the escape-proof staging, beside `curl | tar xz` of the same
 * archive into a plain dir; (b) one exec into a task (the shell that joins the cgroup, then the
 * command), beside a plain spawn of the same command; (c) one HTTP check probe, beside a bare
 * `fetch` of the same URL.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import * as tar from 'tar';
import { RwLock } from '../actors/allocdir/lock.ts';
import { fetchArtifact } from '../actors/artifacts/fetch.ts';
import { runExec } from '../actors/drivers/exec-process.ts';
import { probeHttp } from '../actors/services/probes.ts';
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { sh } from './lib/proc.ts';
import { ratioResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { median, now } from './lib/stats.ts';

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const files = size(opts, 'p9-files', 500, 5000);
  const rounds = size(opts, 'p9-rounds', 30, 200);
  const dir = tempDir('p9');
  const server = http.createServer((req, res) => {
    if (req.url === '/app.tar.gz') return void res.end(readFileSync(path.join(dir, 'app.tar.gz')));
    res.end('ok');
  });
  try {
    // The archive: `files` files of 1 KiB in 10 dirs.
    const src = path.join(dir, 'src');
    for (let i = 0; i < files; i++) {
      const d = path.join(src, `d${i % 10}`);
      if (i < 10) mkdirSync(d, { recursive: true });
      writeFileSync(path.join(d, `f${i}`), Buffer.alloc(1024, i % 251));
    }
    await tar.c(
      { gzip: true, file: path.join(dir, 'app.tar.gz'), cwd: src },
      [...Array(10).keys()].map((i) => `d${i}`),
    );
    const sum = createHash('sha256')
      .update(readFileSync(path.join(dir, 'app.tar.gz')))
      .digest('hex');
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

    const floorDir = path.join(dir, 'floor');
    mkdirSync(floorDir);
    const t0 = now();
    await sh(`curl -sf ${base}/app.tar.gz | tar xz -C ${JSON.stringify(floorDir)}`);
    const floorMs = now() - t0;
    const task = path.join(dir, 'alloc', 'task');
    mkdirSync(path.join(task, 'local'), { recursive: true });
    const t1 = now();
    await fetchArtifact(
      { source: `${base}/app.tar.gz`, options: { checksum: `sha256:${sum}` } },
      {
        dest: { dir: task, allocId: 'p9', built: true, lock: new RwLock() },
        env: {},
        maxBytes: 1 << 30,
        timeoutMs: 600_000,
        signal: new AbortController().signal,
      },
    );
    const artifactMs = now() - t1;
    opts.log(`S1 artifact of ${files} files: ${artifactMs.toFixed(0)} ms (curl | tar xz: ${floorMs.toFixed(0)} ms)`);

    const execMs: number[] = [];
    const spawnMs: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const a = now();
      await runExec({ file: '/bin/true', args: [], cwd: dir, env: { PATH: '/usr/bin:/bin' } });
      execMs.push(now() - a);
      const b = now();
      await new Promise((r) => spawn('/bin/true', [], { cwd: dir, stdio: 'ignore' }).on('close', r));
      spawnMs.push(now() - b);
    }
    const probeMs: number[] = [];
    const fetchMs: number[] = [];
    const ep = { address: '127.0.0.1', port: (server.address() as net.AddressInfo).port };
    for (let i = 0; i < rounds; i++) {
      const a = now();
      await probeHttp({ type: 'http', path: '/health', intervalMs: 1000, timeoutMs: 5000 }, ep, new AbortController().signal);
      probeMs.push(now() - a);
      const b = now();
      await (await fetch(`${base}/health`)).text();
      fetchMs.push(now() - b);
    }
    return [
      ratioResult({
        id: 'S1',
        name: `artifact: ${files}-file tar.gz over loopback, sha256, staged unpack`,
        unit: 'ms',
        value: artifactMs,
        floor: floorMs,
        better: 'lower',
        limit: 10,
      }),
      ratioResult({
        id: 'S1',
        name: 'exec into a task (/bin/true via the cgroup-joining shell), median',
        unit: 'ms',
        value: median(execMs),
        floor: median(spawnMs),
        better: 'lower',
        limit: 3,
      }),
      ratioResult({ id: 'S1', name: 'http check probe, median', unit: 'ms', value: median(probeMs), floor: median(fetchMs), better: 'lower', limit: 4 }),
    ];
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
    await safeRemove(dir);
  }
}
