// `npm run mutate [group…]`: StrykerJS over each mutation group in turn (all of them by default;
// see scripts/mutate-groups.mjs), incremental (a rerun tests only mutants whose code or covering
// specs changed), then one table of scores per folder. Exits non-zero when a group scores below its
// threshold. `--ci` runs CI's fixed small subset instead, from scratch, against its threshold;
// Static mutants (code run once, at import) are left out unless `--static` is given: each needs a
// fresh process running every spec of its group, hours for the whole set on 2 cores.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CI_SUBSET, GROUPS } from './mutate-groups.mjs';
import { compare, DOC, loadReports, parseDoc, survivorsOf } from './survivors.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const stryker = join(dirname(createRequire(import.meta.url).resolve('@stryker-mutator/core/package.json')), 'bin', 'stryker.js');
const shim = join(root, 'scripts', 'stryker-mocha12.cjs');
const args = process.argv.slice(2);
const ci = args.includes('--ci');
const names = ci ? ['ci'] : args.filter((a) => !a.startsWith('--'));
const groups = names.length ? names : Object.keys(GROUPS);
for (const g of groups) if (g !== 'ci' && !GROUPS[g]) throw new Error(`no mutation group "${g}" (one of ${Object.keys(GROUPS).join(', ')})`);
mkdirSync(join(root, 'reports', 'mutation'), { recursive: true });
// What spec/support/leak-check.ts sets up for `npm test`, minus its end-of-suite check (a Stryker
// worker runs the specs many times in one process): a temp dir and a cgroup parent of this run's own.
const runTmp = mkdtempSync(join(tmpdir(), 'berth-mutate-'));
// Traversable by others (not listable): specs that run work as the task user (nobody) reach their files in it.
chmodSync(runTmp, 0o711);
const env = { ...process.env, TMPDIR: runTmp, BERTH_CGROUP_PARENT: `berth-mutate-${process.pid}` };
env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${shim}`.trim();

/** Mutation score (killed + timeout over all valid mutants, in %) of each folder of a JSON report. */
function scores(report) {
  const per = new Map();
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const folder = file
      .split('/')
      .slice(0, /^(actors|agent|bin)\//.test(file) ? 2 : 1)
      .join('/');
    const s = per.get(folder) ?? { detected: 0, valid: 0, survived: 0, noCoverage: 0 };
    for (const m of mutants) {
      if (m.status === 'CompileError' || m.status === 'RuntimeError' || m.status === 'Ignored') continue;
      s.valid++;
      if (m.status === 'Killed' || m.status === 'Timeout') s.detected++;
      if (m.status === 'Survived') s.survived++;
      if (m.status === 'NoCoverage') s.noCoverage++;
    }
    per.set(folder, s);
  }
  return per;
}

const rows = [];
let failed = false;
for (const g of groups) {
  const started = Date.now();
  // Static mutants (code run once at import: chart definitions, tables, constants) each need a fresh
  // test process with every spec of the group: left out of the score unless --static (CI's small
  // subset keeps them, it has few).
  const r = spawnSync(process.execPath, [stryker, 'run', 'stryker.config.mjs'], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...env,
      BERTH_MUTATE_GROUP: g,
      BERTH_MUTATE_INCREMENTAL: ci ? '0' : '1',
      BERTH_MUTATE_IGNORE_STATIC: ci || args.includes('--static') ? '0' : '1',
    },
  });
  const seconds = Math.round((Date.now() - started) / 1000);
  const file = join(root, 'reports', 'mutation', `${g}.json`);
  if (r.status !== 0) failed = true;
  if (!existsSync(file)) {
    rows.push(`${g}: no report (stryker exited ${r.status})`);
    continue;
  }
  const threshold = g === 'ci' ? CI_SUBSET.threshold : GROUPS[g].threshold;
  for (const [folder, s] of scores(JSON.parse(readFileSync(file, 'utf8')))) {
    const score = s.valid ? (100 * s.detected) / s.valid : 100;
    rows.push(
      `${g.padEnd(9)} ${folder.padEnd(18)} ${score.toFixed(2).padStart(6)} %  ${String(s.detected).padStart(4)}/${String(s.valid).padEnd(4)} survived ${s.survived}, no coverage ${s.noCoverage}`,
    );
  }
  rows.push(`${g.padEnd(9)} (threshold ${threshold} %, ${seconds} s, stryker exit ${r.status})`);
}
// A worker killed on a timeout can leave an alloc dir's tmpfs mounts (secrets/, private/) under the
// run's temp dir: unmount them (deepest first, lazily) so the dir can go, and never let cleanup
// hide the scores.
const leftover = readFileSync('/proc/self/mountinfo', 'utf8')
  .split('\n')
  .map((l) => l.split(' ')[4])
  .filter((m) => m && (m === runTmp || m.startsWith(`${runTmp}/`)))
  .sort((a, b) => b.length - a.length);
for (const m of leftover) spawnSync('umount', ['-l', m]);
try {
  rmSync(runTmp, { recursive: true, force: true });
} catch (e) {
  process.stderr.write(`could not remove ${runTmp}: ${e.message}\n`);
}
process.stdout.write(`\nMutation scores\n${rows.join('\n')}\n`);
if (!ci) {
  // Every survivor must be named, with why, in docs/mutation-survivors.md (a spec checks it too).
  const { unlisted, stale } = compare(survivorsOf(loadReports([])), parseDoc(readFileSync(DOC, 'utf8')));
  process.stdout.write(
    unlisted.length || stale.length
      ? `\ndocs/mutation-survivors.md: ${unlisted.length} survivors not listed, ${stale.length} entries whose mutant no longer survives (node scripts/survivors.mjs todo | prune)\n`
      : '\ndocs/mutation-survivors.md lists every survivor\n',
  );
}
process.exit(failed ? 1 : 0);
