/**
 * `npm run bench [-- --quick] [--only P1,P3] [--p1-n 2000 ...]`: runs the benchmark suite, prints
 * a table and writes bench/results.json (`--quick`: bench/results.quick.json). Each figure sits
 * beside a floor measured in the same run. `npm run bench -- --table [--out file]` runs nothing:
 * it rewrites the table in docs/performance.md from bench/results.json (or `file`).
 */
import { writeFileSync, renameSync } from 'node:fs';
import os from 'node:os';
import { benchPath } from './lib/proc.ts';
import type { BenchOptions, BenchResult } from './lib/results.ts';
import { renderTable } from './lib/table.ts';
import { updateDocTable } from './lib/markdown.ts';
import { errorText } from '../model/error-text.ts';

const BENCHES: Record<string, { title: string; load: () => Promise<{ run(o: BenchOptions): Promise<BenchResult[]> }> }> = {
  P1: { title: 'lifecycle throughput', load: () => import('./p1-lifecycle.ts') },
  P2: { title: 'memory per allocation', load: () => import('./p2-memory.ts') },
  P3: { title: 'preemption wake-up', load: () => import('./p3-preemption.ts') },
  P4: { title: 'broadcaster fan-out', load: () => import('./p4-broadcast.ts') },
  P5: { title: 'chroot build', load: () => import('./p5-chroot.ts') },
  P6: { title: 'snapshot migration', load: () => import('./p6-migration.ts') },
  P7: { title: 'viewer overhead', load: () => import('./p7-viewer.ts') },
  P8: { title: 'cgroups', load: () => import('./p8-cgroups.ts') },
  P9: { title: 'agent throughput', load: () => import('./p9-agent-throughput.ts') },
  P10: { title: 'blocking queries', load: () => import('./p10-blocking.ts') },
  P11: { title: 'restore after kill -9', load: () => import('./p11-restore.ts') },
  P12: { title: 'tasks per alloc', load: () => import('./p12-tasks-per-alloc.ts') },
  P13: { title: 'a thousand tasks vs pm2', load: () => import('./p13-pm2.ts') },
  S1: { title: 'service jobs', load: () => import('./s1-services.ts') },
  S2: { title: 'agent bounds', load: () => import('./s2-agent-bounds.ts') },
  S3: { title: 'docker driver', load: () => import('./s3-docker.ts') },
  S4: { title: 'templates', load: () => import('./s4-templates.ts') },
};

function parseArgs(argv: string[]): { quick: boolean; table: boolean; only?: string[]; args: Record<string, string>; out: string } {
  let quick = false;
  let table = false;
  let only: string[] | undefined;
  let out: string | undefined;
  const args: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => inline ?? argv[++i] ?? '';
    if (flag === '--quick') quick = true;
    else if (flag === '--table') table = true;
    else if (flag === '--only')
      only = value()
        .split(',')
        .map((s) => s.trim().toUpperCase())
        .filter(Boolean);
    else if (flag === '--out') out = value();
    else if (flag === '--help' || flag === '-h') {
      console.log(
        'usage: npm run bench -- [--table] [--quick] [--only P1,P3] [--out file] [--p1-n N] [--p2-n N] [--p3-k 10,100,1000] [--p3-rounds R] [--p4-sends N] [--p5-map default|small] [--p6-mb MB] [--p6-small N] [--p7-n N] [--p7-rounds R] [--p8-n N] [--p8-rounds R] [--p9-files N] [--p9-rounds R] (S1) [--s2-groups N] [--s2-rounds R] [--s3-rounds R] [--s3-k K] [--s4-rounds R] [--p9-n N] [--p9-lat-rounds R] [--p10-n N] [--p10-rounds R] [--p11-n N] [--p13-n N]',
      );
      process.exit(0);
    } else if (flag.startsWith('--p')) args[flag.slice(2)] = value();
    else throw new Error(`unknown argument ${a}`);
  }
  for (const id of only ?? []) if (!BENCHES[id]) throw new Error(`--only: unknown benchmark ${id} (have ${Object.keys(BENCHES).join(', ')})`);
  // A quick run never overwrites the full run's results (the documented table comes from those).
  return { quick, table, only, args, out: out ?? benchPath(quick ? 'results.quick.json' : 'results.json') };
}

/** A failure's message without the stack a child process sent along with it. */
const firstLine = (text: string) =>
  text
    .replace(/^(Error: )+/, '')
    .split(/\n|\s+at\s/)[0]!
    .trim();

const { quick, table, only, args, out } = parseArgs(process.argv.slice(2));
if (table) {
  const docFile = benchPath('../docs/performance.md');
  const readme = benchPath('../README.md');
  console.log(await updateDocTable(out, docFile, readme));
  console.log(`\ntable from ${out} written into ${docFile}, its summary into ${readme}`);
  process.exit(0);
}
const t0 = performance.now();
const results: BenchResult[] = [];
const log = (line: string) => console.error(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${line}`);
for (const [id, b] of Object.entries(BENCHES)) {
  if (only && !only.includes(id)) continue;
  const started = performance.now();
  log(`${id} ${b.title}${quick ? ' (quick)' : ''}`);
  try {
    const mod = await b.load();
    const rs = await mod.run({ quick, args, log });
    results.push(...rs);
    for (const r of rs)
      log(`${id} ${r.name}: ${r.value.toFixed(3)} ${r.unit} vs floor ${r.floor.toFixed(3)} -> ratio ${r.ratio.toFixed(3)} (${r.met ? 'met' : 'MISSED'})`);
  } catch (err) {
    log(`${id} failed: ${(err as Error).stack ?? err}`);
    results.push({
      id,
      name: b.title,
      unit: '-',
      value: NaN,
      floor: NaN,
      ratio: NaN,
      // The table gets the message; the stack (often a child's) stays in details.
      target: `error: ${firstLine(errorText(err))}`,
      met: false,
      details: { error: errorText(err) },
    });
  }
  log(`${id} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
const totalS = (performance.now() - t0) / 1000;
const doc = {
  machine: {
    cpus: os.cpus().length,
    node: process.version,
    quick,
    platform: `${os.platform()} ${os.release()}`,
    root: process.geteuid?.() === 0,
    date: new Date().toISOString(),
    totalSeconds: Math.round(totalS * 10) / 10,
  },
  benchmarks: results.map((r) => ({ ...r, value: num(r.value), floor: num(r.floor), ratio: num(r.ratio) })),
};
function num(x: number): number | null {
  return Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : null;
}
const tmp = `${out}.tmp`;
writeFileSync(tmp, JSON.stringify(doc, null, 2) + '\n');
renameSync(tmp, out);
console.log(renderTable(results));
console.log(`\n${results.filter((r) => r.met).length}/${results.length} targets met; ${totalS.toFixed(1)} s; results in ${out}`);
