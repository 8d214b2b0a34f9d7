/**
 * `npm run sim -- --seeds N [--from S] [--coverage] | --seed S [--ops file.json] [--real] [--quiet]`
 *
 * Runs the deterministic simulator (or, with `--real`, randomized schedules on real processes).
 * A failing seed prints its violations, a shrunk op list that still fails (paste it into a
 * regression spec) and the shrunk run's trace.
 * @module
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Coverage } from './coverage.ts';
import { knownFindingOf } from './known.ts';
import type { Op } from './ops.ts';
import { shrink } from './shrink.ts';
import { runSim } from './world.ts';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string' },
    from: { type: 'string' },
    seed: { type: 'string' },
    ops: { type: 'string' },
    real: { type: 'boolean' },
    quiet: { type: 'boolean' },
    coverage: { type: 'boolean' },
  },
});

async function reportFailure(seed: number, ops: Op[], first: string) {
  const invariant = first as Parameters<typeof shrink>[0]['invariant'];
  const { ops: small, runs } = await shrink({ seed, ops, invariant });
  const r = await runSim({ seed, ops: small });
  process.stdout.write(`\nseed ${seed}: ${invariant}, shrunk from ${ops.length} to ${small.length} ops in ${runs} runs\n`);
  process.stdout.write(`regression: await runSim({ seed: ${seed}, ops: ${JSON.stringify(small)} })\n`);
  process.stdout.write(`trace of the shrunk run:\n${r.trace}`);
}

if (values.real) {
  const { runRealCli } = await import('./real/cli.ts');
  process.exitCode = await runRealCli({
    seeds: Number(values.seeds ?? 20),
    from: Number(values.from ?? 1),
    ...(values.seed ? { seed: Number(values.seed) } : {}),
  });
} else if (values.seed !== undefined) {
  const seed = Number(values.seed);
  const ops = values.ops ? (JSON.parse(readFileSync(values.ops, 'utf8')) as Op[]) : undefined;
  const r = await runSim({ seed, ...(ops ? { ops } : {}) });
  process.stdout.write(r.trace);
  for (const v of r.violations) process.stdout.write(`${v.invariant}: ${v.message}\n`);
  if (r.violations.length) {
    process.exitCode = 1;
    await reportFailure(seed, r.ops, r.violations[0]!.invariant);
  }
} else {
  const n = Number(values.seeds ?? 1000);
  const from = Number(values.from ?? 1);
  const t0 = performance.now();
  const byInvariant = new Map<string, number[]>();
  const byKnown = new Map<string, number>();
  let steps = 0;
  const coverage = values.coverage ? new Coverage() : undefined;
  for (let s = from; s < from + n; s++) {
    const r = await runSim({ seed: s, trace: false, ...(coverage ? { inspect: coverage.observe } : {}) });
    steps += r.steps;
    // Known open findings (sim/known.ts) are counted apart; anything else is new.
    const unknown = r.violations.filter((v) => {
      const k = knownFindingOf(v);
      if (k) byKnown.set(k.id, (byKnown.get(k.id) ?? 0) + 1);
      return !k;
    });
    const seen = new Set(unknown.map((v) => v.invariant));
    for (const inv of seen) byInvariant.set(inv, [...(byInvariant.get(inv) ?? []), s]);
    // A progress line every 500 seeds (so a soak cut short still says how far it got).
    if ((s - from + 1) % 500 === 0) {
      const newSeeds = [...new Set([...byInvariant.values()].flat())].sort((a, b) => a - b);
      process.stderr.write(
        `${s - from + 1} seeds (to ${s}), ${((s - from + 1) / ((performance.now() - t0) / 1000)).toFixed(1)}/s; known ${[...byKnown].map(([k, c]) => `${k} x${c}`).join(', ') || 'none'}; new-violation seeds: ${newSeeds.join(',') || 'none'}\n`,
      );
    }
  }
  const secs = (performance.now() - t0) / 1000;
  process.stdout.write(`${n} seeds (${from}..${from + n - 1}) in ${secs.toFixed(1)} s: ${(n / secs).toFixed(1)} seeds/s, ${steps} scheduler steps\n`);
  if (coverage) process.stdout.write(`chart transitions taken by the simulator alone:\n${coverage.table()}`);
  process.stdout.write(`  known open findings: ${[...byKnown].map(([k, c]) => `${k} x${c}`).join(', ') || 'none'}\n`);
  process.stdout.write(`  new violations: ${byInvariant.size ? '' : 'none'}\n`);
  for (const [inv, seeds] of byInvariant) process.stdout.write(`  ${inv}: ${seeds.length} seeds, first ${seeds.slice(0, 20).join(', ')}\n`);
  if (byInvariant.size) {
    process.exitCode = 1;
    if (!values.quiet) {
      for (const [inv, seeds] of byInvariant) {
        const r = await runSim({ seed: seeds[0]!, trace: false });
        await reportFailure(seeds[0]!, r.ops, inv);
      }
    }
  }
}
