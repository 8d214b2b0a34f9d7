/**
 * `job plan`'s diff printer alone, against text written from nomad's printing rules
 * (`command/job_plan.go`): markers and their alignment per level, an added group collapsed
 * unless verbose, a blank line after a group with tasks, annotations, Go-quoted values, colours.
 */
import { expect } from 'chai';
import type { FieldDiff, JobDiff } from '../../agent/jobs/diff/index.ts';
import { formatJobDiff } from '../../bin/cli/job/plan-diff.ts';

const f = (Type: FieldDiff['Type'], Name: string, Old: string, New: string, Annotations: string[] | null = null): FieldDiff => ({
  Type,
  Name,
  Old,
  New,
  Annotations,
});

const DIFF: JobDiff = {
  Type: 'Edited',
  ID: 'example',
  Fields: [f('Added', 'Meta[team]', '', 'a'), f('Edited', 'Priority', '50', '60')],
  Objects: [
    {
      Type: 'Deleted',
      Name: 'Constraint',
      Fields: [f('Deleted', 'LTarget', '${attr.kernel.name}', ''), f('Deleted', 'Operand', '=', ''), f('Deleted', 'RTarget', 'linux', '')],
      Objects: null,
    },
  ],
  TaskGroups: [
    {
      Type: 'Added',
      Name: 'api',
      Fields: [f('Added', 'Count', '', '1', ['forces create'])],
      Objects: null,
      Tasks: [{ Type: 'Added', Name: 'a', Fields: [f('Added', 'Driver', '', 'raw_exec')], Objects: null, Annotations: ['forces create'] }],
      Updates: { create: 1 },
    },
    {
      Type: 'Edited',
      Name: 'web',
      Fields: [f('Edited', 'Count', '1', '2', ['forces create'])],
      Objects: null,
      Tasks: [{ Type: 'None', Name: 'server', Fields: null, Objects: null, Annotations: null }],
      Updates: { 'in-place update': 1, create: 1 },
    },
  ],
};

describe('cli: job plan’s diff, printed as nomad prints it', () => {
  it('aligns markers, names and values per level; an added group shows its header and its tasks’ only', () => {
    expect(formatJobDiff(DIFF, false, false)).to.equal(
      [
        '+/- Job: "example"',
        '+   Meta[team]: "a"',
        '+/- Priority:   "50" => "60"',
        '-   Constraint {',
        '    - LTarget: "${attr.kernel.name}"',
        '    - Operand: "="',
        '    - RTarget: "linux"',
        '    }',
        '+   Task Group: "api" (1 create)',
        '    + Task: "a" (forces create)',
        '',
        '+/- Task Group: "web" (1 create, 1 in-place update)',
        '  +/- Count: "1" => "2" (forces create)',
        '      Task: "server"',
      ].join('\n'),
    );
  });

  it('-verbose expands an added group and task', () => {
    const text = formatJobDiff(DIFF, true, false);
    expect(text).to.contain(
      ['+   Task Group: "api" (1 create)', '    + Count: "1" (forces create)', '    + Task: "a" (forces create)', '      + Driver: "raw_exec"', ''].join('\n'),
    );
  });

  it('an added job collapses to its headers; values are quoted as Go quotes them', () => {
    const added: JobDiff = {
      Type: 'Added',
      ID: 'new',
      Fields: [f('Added', 'Name', '', 'new')],
      Objects: null,
      TaskGroups: [{ Type: 'Added', Name: 'g', Fields: null, Objects: null, Tasks: null, Updates: { create: 2 } }],
    };
    expect(formatJobDiff(added, false, false)).to.equal('+ Job: "new"\n+ Task Group: "g" (2 create)');
    const quoted: JobDiff = { ...added, Type: 'Edited', Fields: [f('Edited', 'Meta[m]', 'a"b', 'tab\there\x01')], TaskGroups: null };
    expect(formatJobDiff(quoted, false, false)).to.equal('+/- Job: "new"\n+/- Meta[m]: "a\\"b" => "tab\\there\\x01"');
  });

  it('in colour: nomad’s colours for markers, counts and annotations; the same text without them', () => {
    const coloured = formatJobDiff(DIFF, false, true);
    expect(coloured).to.contain('\x1b[93m+/-\x1b[0m ');
    expect(coloured).to.contain('\x1b[32m1 create\x1b[0m, \x1b[36m1 in-place update\x1b[0m');
    expect(coloured).to.contain('(\x1b[32mforces create\x1b[0m)');
    // eslint-disable-next-line no-control-regex
    expect(coloured.replace(/\x1b\[\d+m/g, '')).to.equal(formatJobDiff(DIFF, false, false));
  });
});
