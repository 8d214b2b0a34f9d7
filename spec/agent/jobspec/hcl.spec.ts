/**
 * `hcl.ts`: HCL2 text read by HashiCorp's parser (hcl2json), its syntax errors as a JobspecError
 * with HashiCorp's summary and detail at the first error's line and column (and how many more
 * errors came after it), and what the JSON loses found again in the text: the source order of
 * labelled blocks and where a chain of blocks starts.
 */
import { expect } from 'chai';
import { labelOrder, locate, parseHcl } from '../../../agent/jobspec/hcl.ts';
import { SourceIndex } from '../../../agent/jobspec/source-index.ts';
import { JobspecError } from '../../../index.ts';

/** What parseHcl's rejection says: message, position and issues. */
async function failure(text: string, filename = 'f.hcl') {
  try {
    await parseHcl(text, filename);
  } catch (e) {
    expect(e).to.be.instanceOf(JobspecError);
    const j = e as JobspecError;
    return { message: j.message, file: j.file, line: j.line, column: j.column, issues: j.issues };
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

describe('jobspec: hcl.ts, HashiCorp parser and its errors', () => {
  it('parses HCL2 to the JSON hcl2json gives (blocks as lists under their labels)', async () => {
    const text = 'job "web" {\n  datacenters = ["dc1"]\n  group "g" {\n    count = 2\n  }\n}\nn = 1.5\n';
    expect(await parseHcl(text, 'web.nomad.hcl')).to.deep.equal({
      job: { web: [{ datacenters: ['dc1'], group: { g: [{ count: 2 }] } }] },
      n: 1.5,
    });
  });

  it("a syntax error: HashiCorp's summary and detail at the first error's line and column", async () => {
    const detail = 'Invalid expression; Expected the start of an expression, but found an invalid expression token.';
    expect(await failure('job "a" {\n  x = \n}\n')).to.deep.equal({
      message: `f.hcl:2:7: ${detail}`,
      file: 'f.hcl',
      line: 2,
      column: 7,
      issues: [detail],
    });
    // The range's end on the same line (1,5-10) and at the end of the file (3,1-1).
    expect(await failure('x = 1.2.3\n', 'job.nomad.hcl')).to.deep.equal({
      message: 'job.nomad.hcl:1:5: Invalid number literal; Failed to recognize the value of this number literal.',
      file: 'job.nomad.hcl',
      line: 1,
      column: 5,
      issues: ['Invalid number literal; Failed to recognize the value of this number literal.'],
    });
    expect(await failure('a = 1\nb = [\n')).to.deep.include({
      message: 'f.hcl:3:1: Missing expression; Expected the start of an expression, but found the end of the file.',
      line: 3,
      column: 1,
    });
    // A position inside the detail ("already set at f.hcl:1,1-2.") is part of the text, not another error.
    expect(await failure('a = 1\na = 2\n')).to.deep.include({
      message: 'f.hcl:2:1: Attribute redefined; The argument "a" was already set at f.hcl:1,1-2. Each argument may be set only once.',
      line: 2,
      column: 1,
    });
  });

  it('several errors: the first, and how many more came after it', async () => {
    const invalid = 'Invalid character; This character is not used within the language.';
    expect(await failure('a = ${\n')).to.deep.equal({
      message: `f.hcl:1:5: ${invalid} (and 1 more error after it)`,
      file: 'f.hcl',
      line: 1,
      column: 5,
      issues: [`${invalid} (and 1 more error after it)`],
    });
    expect((await failure('a = @\nb = @\n')).message).to.equal(`f.hcl:1:5: ${invalid} (and 2 more errors after it)`);
    expect((await failure('a = @\nb = @\nc = @\n')).message).to.equal(`f.hcl:1:5: ${invalid} (and 3 more errors after it)`);
    // Two errors whose ranges span lines (1,7-2,1).
    expect(await failure('a = "x\n')).to.deep.include({
      message:
        'f.hcl:1:7: Invalid multi-line string; Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the "heredoc" multi-line template syntax. (and 1 more error after it)',
      line: 1,
      column: 7,
    });
  });

  it("a file name with spaces or brackets is the caller's, whatever the parser's text holds", async () => {
    expect(await failure('a = @\n', '<value for var.x>')).to.deep.include({
      message: '<value for var.x>:1:5: Invalid character; This character is not used within the language. (and 1 more error after it)',
      file: '<value for var.x>',
      line: 1,
      column: 5,
    });
    expect(await failure('{', 'a[1].hcl')).to.deep.include({
      message: 'a[1].hcl:1:1: Argument or block definition required; An argument or block definition is required here.',
      file: 'a[1].hcl',
      line: 1,
      column: 1,
    });
  });

  it('labelOrder: labels in the order the text has them, absent ones last', () => {
    const index = new SourceIndex('job "b" {\n}\njob "c" {}\njob "a" {\n  group "z" {}\n  group "y" {}\n}\n');
    expect(labelOrder(index, 'job', ['a', 'b', 'c'])).to.deep.equal(['b', 'c', 'a']);
    expect(labelOrder(index, 'job', ['c', 'a', 'b'])).to.deep.equal(['b', 'c', 'a']);
    expect(labelOrder(index, 'group', ['y', 'z'])).to.deep.equal(['z', 'y']);
    expect(labelOrder(index, 'job', ['x', 'a', 'b'])).to.deep.equal(['b', 'a', 'x']);
    expect(labelOrder(index, 'job', [])).to.deep.equal([]);
  });

  it('locate: each step found after the previous; the last step found when a later one is not', () => {
    const text = 'job "web" {\n  group "a" {\n    task "t" {}\n  }\n  group "b" {\n    task "t" {\n      config {}\n    }\n  }\n}\n';
    const index = new SourceIndex(text);
    const groupB = text.indexOf('group "b"');
    const taskInB = text.indexOf('task "t"', groupB);
    expect(locate(index, [['job', 'web']])).to.equal(0);
    expect(
      locate(index, [
        ['job', 'web'],
        ['group', 'b'],
      ]),
    ).to.equal(groupB);
    expect(
      locate(index, [
        ['job', 'web'],
        ['group', 'b'],
        ['task', 't'],
      ]),
    ).to.equal(taskInB);
    expect(locate(index, [['job', 'web'], ['group', 'b'], ['task', 't'], ['config']])).to.equal(text.indexOf('config'));
    // A task "t" before group "b" is not the one meant: the search goes on from the group.
    expect(
      locate(index, [
        ['group', 'a'],
        ['task', 't'],
      ]),
    ).to.equal(text.indexOf('task "t"'));
    expect(locate(index, [['job', 'web'], ['group', 'b'], ['driver']])).to.equal(groupB);
    expect(
      locate(index, [
        ['job', 'web'],
        ['group', 'nope'],
        ['task', 't'],
      ]),
    ).to.equal(0);
    expect(locate(index, [['job', 'other']])).to.equal(undefined);
    expect(locate(index, [])).to.equal(undefined);
    // The step after a match starts one past it: the same word again is the next one.
    expect(locate(index, [['task'], ['task']])).to.equal(taskInB);
  });
});
