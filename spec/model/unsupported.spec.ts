import { expect } from 'chai';
import { UNSUPPORTED_DRIVERS } from '../../model/schema/driver-config.ts';
import { unsupportedCamelKeys } from '../../model/schema/nomad.ts';
import { findUnsupported } from '../../model/schema/unsupported.ts';

/** A camelCase job of one group with one task. */
const jobWith = (task: Record<string, unknown>) => ({ id: 'j', taskGroups: [{ name: 'g', tasks: [{ name: 'web', driver: 'raw_exec', ...task }] }] });

describe('model: findUnsupported', () => {
  const [vault, consul] = ['vault', 'consul'].map((k) => {
    expect(unsupportedCamelKeys('Task'), `the Task table refuses ${k}`).to.have.property(k);
    return k;
  });

  it('an empty stanza is no stanza: undefined, null, false, "", 0, [] and {} are not reported', () => {
    for (const empty of [undefined, null, false, '', 0, [], {}]) {
      const found = findUnsupported(jobWith({ [vault!]: empty }), 'job', false);
      expect(found, JSON.stringify(empty) ?? 'undefined').to.deep.equal({ removable: [], fatal: [] });
    }
  });

  it('a stanza with content is reported at its path; without remove the job is left as it was, with remove it goes', () => {
    const job = jobWith({ [vault!]: { policies: ['p'] }, [consul!]: { namespace: 'n' } });
    const before = structuredClone(job);
    const found = findUnsupported(job, 'job', false);
    expect(found.removable.map((u) => u.path)).to.deep.equal(['job.taskGroups[0].tasks[0].vault', 'job.taskGroups[0].tasks[0].consul']);
    expect(found.fatal).to.deep.equal([]);
    expect(job, 'nothing removed when only asked').to.deep.equal(before);
    findUnsupported(job, 'job', true);
    expect(job.taskGroups[0]!.tasks[0]).to.not.have.any.keys(vault!, consul!);
    expect(job.taskGroups[0]!.tasks[0]).to.include({ name: 'web', driver: 'raw_exec' });
  });

  it('a container driver is fatal, at its path; a driver berth runs is not', () => {
    expect(findUnsupported(jobWith({}), 'job', false).fatal).to.deep.equal([]);
    expect(findUnsupported(jobWith({ driver: 'exec' }), 'job', false).fatal).to.deep.equal([]);
    const driver = UNSUPPORTED_DRIVERS[0]!;
    expect(findUnsupported(jobWith({ driver }), 'job', true).fatal).to.deep.equal([
      { stanza: `driver ${JSON.stringify(driver)}`, path: 'job.taskGroups[0].tasks[0].driver' },
    ]);
  });
});
