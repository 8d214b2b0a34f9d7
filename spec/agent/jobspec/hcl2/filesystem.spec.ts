/**
 * The filesystem functions on real files in a temp dir: paths relative to the job file's dir,
 * `~` expanded, the size bound, text that is not UTF-8, directories, and the disabled table (a
 * job submitted over the API reads no file of the server).
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HclDiagnostic } from '../../../../agent/jobspec/hcl2/errors.ts';
import { evaluate, type EvalContext } from '../../../../agent/jobspec/hcl2/evaluate.ts';
import { MAX_FILE_FUNCTION_BYTES } from '../../../../agent/jobspec/hcl2/functions/filesystem.ts';
import { nomadFunctions } from '../../../../agent/jobspec/hcl2/functions/index.ts';
import { parseTemplate } from '../../../../agent/jobspec/hcl2/parser.ts';
import type { Value } from '../../../../agent/jobspec/hcl2/values.ts';

describe('hcl2: filesystem functions', () => {
  let dir: string;
  let ev: (text: string, allowFs?: boolean) => Value;
  const fails = (text: string, allowFs = true): string => {
    try {
      ev(text, allowFs);
    } catch (e) {
      expect(e).to.be.instanceOf(HclDiagnostic);
      return (e as Error).message;
    }
    throw new Error(`${text} evaluated`);
  };
  const failed = (fn: string, why: string) => `Error in function call; Call to function "${fn}" failed: ${why}.`;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-hcl-fs-'));
    writeFileSync(join(dir, 'a.txt'), 'héllo\n');
    writeFileSync(join(dir, 'bin'), Buffer.from([0xff, 0x00, 0x41]));
    writeFileSync(join(dir, 'big'), Buffer.alloc(MAX_FILE_FUNCTION_BYTES + 1, 0x61));
    writeFileSync(join(dir, 'edge'), Buffer.alloc(MAX_FILE_FUNCTION_BYTES, 0x61));
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'b.txt'), 'b');
    ev = (text, allowFs = true) => {
      const ctx: EvalContext = {
        src: text,
        vars: new Map(),
        local: () => null,
        localNames: () => [],
        functions: nomadFunctions({ basedir: dir, allowFs }),
      };
      return evaluate(parseTemplate(text), ctx);
    };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('file and filebase64 read relative to the job file dir, or an absolute path', () => {
    expect(ev('${file("a.txt")}')).to.equal('héllo\n');
    expect(ev('${file("sub/b.txt")}')).to.equal('b');
    expect(ev(`\${file("${join(dir, 'a.txt')}")}`)).to.equal('héllo\n');
    expect(ev('${filebase64("bin")}')).to.equal('/wBB');
    expect((ev('${file("edge")}') as string).length).to.equal(MAX_FILE_FUNCTION_BYTES);
  });

  it('fileexists: true for a file, false for nothing, an error for a directory', () => {
    expect([ev('${fileexists("a.txt")}'), ev('${fileexists("nope")}')]).to.deep.equal([true, false]);
    expect(fails('${fileexists("sub")}')).to.equal(failed('fileexists', 'sub is not a regular file, but "directory"'));
  });

  it('path functions', () => {
    expect(ev('${basename("/a/b.txt")}|${dirname("/a/b.txt")}|${dirname("b")}|${abspath("x/y")}')).to.equal(`b.txt|/a|.|${resolve('x/y')}`);
    expect([ev('${pathexpand("~")}'), ev('${pathexpand("~/x")}'), ev('${pathexpand("a/~")}')]).to.deep.equal([homedir(), join(homedir(), 'x'), 'a/~']);
  });

  it("refusals in HashiCorp's words", () => {
    expect(fails('${file("nope")}')).to.equal(
      failed(
        'file',
        'no file exists at nope; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource',
      ),
    );
    expect(fails('${file("sub")}')).to.equal(failed('file', 'failed to read sub: is a directory'));
    expect(fails('${filebase64("big")}')).to.equal(failed('filebase64', `big is larger than ${MAX_FILE_FUNCTION_BYTES} bytes`));
    expect(fails('${file("bin")}')).to.equal(
      failed(
        'file',
        'contents of bin are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead',
      ),
    );
  });

  it('disabled, every filesystem function refuses, even for a file that exists', () => {
    const names = ['file("a.txt")', 'filebase64("a.txt")', 'fileexists("a.txt")', 'abspath("a")', 'basename("a")', 'dirname("a")', 'pathexpand("~")'];
    expect(names.map((call) => fails(`\${${call}}`, false))).to.deep.equal(
      names.map((call) => failed(call.slice(0, call.indexOf('(')), 'filesystem function disabled')),
    );
  });
});
