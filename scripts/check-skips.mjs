// `node scripts/check-skips.mjs FILE`: fails (exit 1) when FILE, the skipped tests' titles that
// spec/support/summary-reporter.cjs wrote, names a test spec/support/allowed-skips.mjs does not
// allow. .ci/run runs it after `npm test`, so nothing stops running in CI without anyone knowing.
import { readFileSync } from 'node:fs';
import { ALLOWED_SKIPS } from '../spec/support/allowed-skips.mjs';

const file = process.argv[2];
if (!file) throw new Error('usage: node scripts/check-skips.mjs FILE');
const skipped = readFileSync(file, 'utf8').split('\n').filter(Boolean);
const unexpected = [];
for (const title of skipped) {
  const allowed = ALLOWED_SKIPS.find((a) => a.title.test(title));
  console.log(`skipped: ${title}${allowed ? ` (allowed: ${allowed.why})` : ' (NOT ALLOWED)'}`);
  if (!allowed) unexpected.push(title);
}
if (unexpected.length) {
  console.error(`${unexpected.length} test(s) skipped that spec/support/allowed-skips.mjs does not allow: make them run here, or allow them there with why`);
  process.exit(1);
}
console.log(`skips: ${skipped.length}, all allowed`);
