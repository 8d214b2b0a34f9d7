/**
 * Parsing is linear in labelled blocks: a file of thousands of groups is indexed once (words,
 * labels, line starts), and ordering the groups or placing a problem in the last one is a lookup in
 * that index, not a scan of the whole text per comparison or per problem (which made 4,000 groups
 * take seconds with the event loop blocked). Counted in whole-text scans, not timed; the time per
 * MiB is a benchmark row (S2).
 */
import { expect } from 'chai';
import { parseJobspec } from '../../../agent/jobspec/index.ts';
import { JobspecError } from '../../../model/errors.ts';
import { textScans } from '../../../agent/jobspec/source-index.ts';
import { manyGroups } from '../../support/jobspec-pieces.ts';

async function scansOf(text: string): Promise<{ scans: number; error?: JobspecError }> {
  const before = textScans();
  try {
    await parseJobspec(text);
    return { scans: textScans() - before };
  } catch (e) {
    if (!(e instanceof JobspecError)) throw e;
    return { scans: textScans() - before, error: e };
  }
}

describe('jobspec parsing is linear in labelled blocks', function () {
  this.timeout(60_000);

  it('4,000 groups are indexed once, as 10 are, and keep the order of the file', async () => {
    const small = await scansOf(manyGroups(10));
    const large = await scansOf(manyGroups(4_000));
    expect(small.error).to.equal(undefined);
    expect(large.error).to.equal(undefined);
    expect(large.scans, 'whole-text scans for 4,000 groups').to.equal(small.scans);
    expect(large.scans).to.be.at.most(2);
    // Group names sort numerically-unfriendly (g10 < g2 as strings): the file's order must win.
    const api = await parseJobspec(manyGroups(4_000));
    const names = api.TaskGroups!.map((g) => (g as { Name: string }).Name);
    expect(names.length).to.equal(4_000);
    expect(names.slice(0, 3)).to.deep.equal(['g0', 'g1', 'g2']);
    expect(names.at(-1)).to.equal('g3999');
  });

  it('a problem in group 3,999 is placed at its line and column with no further scan', async () => {
    const text = manyGroups(4_000, 3_999);
    const { scans, error } = await scansOf(text);
    expect(error, 'the unknown key is refused').to.be.instanceOf(JobspecError);
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('bogus_key')) + 1;
    expect(error!.line).to.equal(line);
    expect(error!.column).to.equal(lines[line - 1]!.indexOf('bogus_key') + 1);
    expect(error!.message).to.include('bogus_key');
    expect(error!.path).to.equal('job.taskGroups[3999].tasks[0].bogus_key');
    expect(scans, 'whole-text scans').to.be.at.most(2);
  });
});
