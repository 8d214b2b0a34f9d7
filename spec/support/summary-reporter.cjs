// Mocha's spec reporter, plus one closing line CI can read:
// "N passed, N failed, N skipped". The exit code still comes from mocha (failures > 0 => non-zero).
// With BERTH_SKIPS_FILE set (.ci/run sets it), the full title of every skipped test is written
// there, one a line, for scripts/check-skips.mjs to hold against spec/support/allowed-skips.mjs.
'use strict';
const { writeFileSync } = require('node:fs');
const Mocha = require('mocha');
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END, EVENT_TEST_PENDING } = Mocha.Runner.constants;

class SummaryReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    const skipped = [];
    runner.on(EVENT_TEST_PENDING, (test) => skipped.push(test.fullTitle()));
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats || this.stats;
      if (process.env.BERTH_SKIPS_FILE) writeFileSync(process.env.BERTH_SKIPS_FILE, skipped.map((t) => `${t}\n`).join(''));
      process.stdout.write(`\n${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}
module.exports = SummaryReporter;
