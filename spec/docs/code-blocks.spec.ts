/**
 * Every runnable code block of README.md and docs/*.md, run against the packed package installed
 * offline into a project of its own, so no example in the docs can rot.
 *
 * Which blocks run is decided by their language (see spec/docs/blocks.ts and docs/code-blocks.md):
 * `ts`/`js` blocks are complete ES modules run on plain Node (TypeScript stripped of its types);
 * `sh` blocks run in bash, `-euo pipefail`, with the package's `berth` bin on PATH; `console`,
 * `text`, `hcl`, `json` and unlabelled blocks are shown only. Each block is one test named
 * `<file>:<line> (<lang>)`; a failure prints the block, its exit code and its output.
 *
 * `npm install berth-runtime` in a block is answered by the tarball already installed (this spec
 * runs offline); every other npm command is the real one.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { installOffline, packBerth, PKG_NAME, REPO, writeConsumerProject } from '../package/consumer-project.ts';
import { extractBlocks, kindOf, repoBlocks, type CodeBlock } from './blocks.ts';

const BLOCK_TIMEOUT_MS = 90_000;

/** Runs a command; resolves with its exit code and output (never rejects on a non-zero exit). */
function run(file: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | string; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { ...opts, timeout: BLOCK_TIMEOUT_MS, killSignal: 'SIGTERM', maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const e = err as (Error & { code?: number | string; killed?: boolean; signal?: string }) | null;
      const code = !e ? 0 : e.killed ? `killed (${e.signal}) after ${BLOCK_TIMEOUT_MS / 1000} s` : (e.code ?? -1);
      resolve({ code, out: `--- stdout ---\n${stdout}--- stderr ---\n${stderr}` });
    });
  });
}

/**
 * Runs one block in `dir`: a script as an ES module on plain Node (TypeScript stripped of its
 * types), a shell block with `bash -euo pipefail`.
 */
async function runBlock(block: CodeBlock & { kind: 'script' | 'shell' }, dir: string, env: NodeJS.ProcessEnv): Promise<{ code: number | string; out: string }> {
  if (block.kind === 'shell') return run('bash', ['-euo', 'pipefail', '-c', block.code], { cwd: dir, env });
  const js =
    block.lang === 'ts' || block.lang === 'typescript'
      ? ts.transpileModule(block.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false } })
          .outputText
      : block.code;
  const script = join(dir, `block-${block.line}.mjs`);
  writeFileSync(script, js);
  return run(process.execPath, [script], { cwd: dir, env });
}

/** What a failing block reports: where it is, its exit code, the block and its output. */
const failureReport = (block: CodeBlock, r: { code: number | string; out: string }) =>
  `${block.file}:${block.line} (${block.lang}) exited ${r.code}\n--- block ---\n${block.code}${r.out}`;

/** A directory name for a doc file's blocks. */
const dirFor = (file: string) => file.replace(/[/.]/g, '_');

/** Where a block runs: one directory per doc file, shared by its blocks. */
const blockDir = (project: string, block: CodeBlock) => join(project, 'blocks', dirFor(block.file));

describe('the docs: which code blocks run', () => {
  it('runs ts, js and sh blocks (and their long names); shows console, text, hcl, json and unlabelled ones', () => {
    const md = [
      '```ts',
      'a',
      '```',
      '```js',
      'b',
      '```',
      '```sh',
      'c',
      '```',
      '```console',
      '$ d',
      '```',
      '```text',
      'e',
      '```',
      '```hcl',
      'f',
      '```',
      '```json',
      '{}',
      '```',
      '```',
      'g',
      '```',
      '~~~bash',
      'h',
      '~~~',
    ].join('\n');
    const blocks = extractBlocks('x.md', md);
    expect(blocks.map((b) => [b.line, b.lang, b.kind])).to.deep.equal([
      [1, 'ts', 'script'],
      [4, 'js', 'script'],
      [7, 'sh', 'shell'],
      [10, 'console', undefined],
      [13, 'text', undefined],
      [16, 'hcl', undefined],
      [19, 'json', undefined],
      [22, '', undefined],
      [25, 'bash', 'shell'],
    ]);
    expect(blocks[0]!.code).to.equal('a\n');
    expect(kindOf('typescript')).to.equal('script');
    expect(kindOf('shell')).to.equal('shell');
  });

  it('a longer fence holds a shorter one, and the block ends at its own fence', () => {
    const blocks = extractBlocks('x.md', ['````md', '```ts', 'x', '```', '````', '```sh', 'y', '```'].join('\n'));
    expect(blocks.map((b) => [b.line, b.lang])).to.deep.equal([
      [1, 'md'],
      [6, 'sh'],
    ]);
    expect(blocks[0]!.code).to.equal('```ts\nx\n```\n');
  });

  it('a ts block runs as an ES module with its types stripped, an sh block with bash -euo pipefail, the blocks of a file in one dir; a failure names <file>:<line> (<lang>) with the block, its exit code and its output', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-block-'));
    try {
      const md = [
        '```ts',
        "import { writeFileSync } from 'node:fs';",
        'const n: number = 2;',
        "writeFileSync('made', String(n * 21));",
        '```',
        '```sh',
        'test "$(cat made)" = 42',
        '```',
        '```bash',
        'echo before',
        'false | true',
        'echo after',
        '```',
      ].join('\n');
      const [tsBlock, shBlock, failing] = extractBlocks('docs/x.md', md) as Array<CodeBlock & { kind: 'script' | 'shell' }>;
      const [other] = extractBlocks('docs/y.md', '```sh\ntrue\n```');
      const here = blockDir(dir, tsBlock!);
      expect([blockDir(dir, shBlock!), blockDir(dir, failing!)]).to.deep.equal([here, here]);
      expect(blockDir(dir, other!)).to.not.equal(here);
      mkdirSync(here, { recursive: true });
      expect(await runBlock(tsBlock!, here, process.env)).to.include({ code: 0 });
      expect(await runBlock(shBlock!, here, process.env), 'a second block sees the first one’s file').to.include({
        code: 0,
      });
      const r = await runBlock(failing!, here, process.env);
      expect(r.code).to.equal(1);
      expect(failureReport(failing!, r)).to.equal(
        'docs/x.md:9 (bash) exited 1\n--- block ---\necho before\nfalse | true\necho after\n--- stdout ---\nbefore\n--- stderr ---\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the README has a runnable embedding block and a runnable berth run of one file', () => {
    const readme = repoBlocks(REPO).filter((b) => b.file === 'README.md' && b.kind);
    expect(readme.some((b) => b.kind === 'script' && b.code.includes(`from '${PKG_NAME}'`))).to.equal(true);
    expect(readme.some((b) => b.kind === 'shell' && /npx berth run \S+/.test(b.code))).to.equal(true);
  });
});

describe('the docs: every ts, js and sh block runs against the packed package', function () {
  this.timeout(300_000);
  const blocks = repoBlocks(REPO).filter((b): b is CodeBlock & { kind: 'script' | 'shell' } => b.kind !== undefined);
  let work: string;
  let project: string;
  let env: NodeJS.ProcessEnv;

  before(async function () {
    this.timeout(300_000);
    work = mkdtempSync(join(tmpdir(), 'berth-docs-'));
    project = join(work, 'app');
    mkdirSync(project);
    const tarball = await packBerth(work);
    writeConsumerProject(project, tarball);
    await installOffline(project);
    // `npm install berth-runtime` is already done (offline, from the tarball); anything else is npm.
    const shim = join(work, 'shim');
    mkdirSync(shim);
    const realNpm = (await new Promise<string>((resolve) => execFile('bash', ['-c', 'command -v npm'], (_e, out) => resolve(out.trim())))) || 'npm';
    writeFileSync(
      join(shim, 'npm'),
      `#!/bin/bash\nif [ "$1" = install ] && [ "$2" = ${PKG_NAME} ] && [ $# -eq 2 ]; then echo "${PKG_NAME}: installed from the packed tarball"; exit 0; fi\nexec ${realNpm} "$@"\n`,
    );
    chmodSync(join(shim, 'npm'), 0o755);
    env = {
      ...process.env,
      PATH: `${shim}:${join(project, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`,
      NO_COLOR: '1',
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
    };
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  for (const block of blocks) {
    it(`${block.file}:${block.line} (${block.lang})`, async function () {
      this.timeout(BLOCK_TIMEOUT_MS + 10_000);
      const dir = blockDir(project, block);
      mkdirSync(dir, { recursive: true });
      const r = await runBlock(block, dir, env);
      expect(r.code, failureReport(block, r)).to.equal(0);
      if (block.file === 'README.md' && block.kind === 'script' && block.code.includes('createClient')) {
        expect(r.out, 'the README quick start prints the alloc status, the exit code and the task output').to.match(/complete exit code 0\nhello\n/);
      }
    });
  }
});
