// StrykerJS (mutation testing): `npm run mutate` runs one group at a time (scripts/mutate.mjs sets
// BERTH_MUTATE_GROUP); each group names the folders it mutates and the specs that prove them, so a
// mutant only ever runs the specs meant for its code. Folders, not files, so restructures survive.
import { CI_SUBSET, GROUPS } from './scripts/mutate-groups.mjs';

const name = process.env.BERTH_MUTATE_GROUP ?? 'bus';
const group = name === 'ci' ? CI_SUBSET : GROUPS[name];
if (!group) throw new Error(`BERTH_MUTATE_GROUP=${name}: no such group (one of ${Object.keys(GROUPS).join(', ')})`);
const subset = process.env.BERTH_MUTATE_FILES?.split(',').filter(Boolean);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'mocha',
  plugins: ['@stryker-mutator/mocha-runner'],
  mutate: subset ?? group.mutate,
  mochaOptions: {
    spec: group.spec,
    'no-config': true,
    'no-package': true,
    'no-opts': true,
  },
  // tsx compiles the TypeScript (the instrumented source keeps its types; tsx strips them).
  testRunnerNodeArgs: ['--import', 'tsx'],
  coverageAnalysis: 'perTest',
  incremental: process.env.BERTH_MUTATE_INCREMENTAL !== '0',
  ignoreStatic: process.env.BERTH_MUTATE_IGNORE_STATIC === '1',
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  // 4 workers on 2 cores: a timed-out mutant leaves its worker waiting 10 s, then reloading every
  // spec; the others use the CPU meanwhile (security from scratch: 17.5 min, 30 min with 2).
  concurrency: Number(process.env.BERTH_MUTATE_CONCURRENCY ?? 4),
  timeoutMS: 10000,
  thresholds: { high: group.threshold + 5, low: group.threshold, break: group.threshold },
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['dist', 'reports', 'sim/tmp', 'bench/results*.json', '.git'],
  disableTypeChecks: '{machines,bus,model,actors,agent,bin}/**/*.ts',
};
