/**
 * One `template` block rendered and written (`actors/runner/render-templates.ts`), on real files:
 * the perms set exactly, the atomic write, Nomad's escape rule for destinations and sources,
 * `error_on_missing_key`, and the env-file rules of `env = true`.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskTemplate } from '../../../model/types.ts';
import { parseEnvFile, renderTemplate, TemplateRenderError, writeRendered, type RenderContext } from '../../../actors/runner/render-templates.ts';
import type { DepReader } from '../../../actors/templates/nomad-funcs.ts';

describe('template blocks: one block rendered and written', () => {
  let root: string;
  let ctx: RenderContext;
  const nothing: DepReader = { read: () => ({ fetched: false }), missing: () => {} };
  const opts = { who: { namespace: 'default' }, denylist: [], noSandbox: false };
  const tpl = (over: Partial<TaskTemplate>): TaskTemplate => ({ destination: 'local/out', ...over }) as TaskTemplate;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'berth-render-'));
    const alloc = join(root, 'alloc-1');
    mkdirSync(join(alloc, 't', 'local'), { recursive: true });
    ctx = { env: { NOMAD_ALLOC_DIR: join(alloc, 'alloc') }, taskDir: { dir: join(alloc, 't') }, allocDir: { dir: alloc } };
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes 0644 by default and the perms asked for exactly, whatever the umask, leaving no temporary file', async () => {
    const old = process.umask(0o077);
    try {
      await writeRendered(tpl({ destination: 'local/a' }), ctx, 'a');
      await writeRendered(tpl({ destination: 'local/b', perms: '0666' }), ctx, 'b');
    } finally {
      process.umask(old);
    }
    const local = join(ctx.taskDir.dir, 'local');
    expect(statSync(join(local, 'a')).mode & 0o777).to.equal(0o644);
    expect(statSync(join(local, 'b')).mode & 0o777).to.equal(0o666);
    expect(readdirSync(local).sort()).to.deep.equal(['a', 'b']);
    expect(readFileSync(join(local, 'b'), 'utf8')).to.equal('b');
  });

  it('refuses a destination outside the alloc dir; reads a source from the task dir, and none outside the alloc dir', async () => {
    const escaped = await writeRendered(tpl({ destination: '../../elsewhere' }), ctx, 'x').catch((e: Error) => e);
    expect(escaped).to.be.instanceOf(TemplateRenderError);
    expect((escaped as Error).message).to.equal('destination ../../elsewhere escapes the alloc dir');
    writeFileSync(join(ctx.taskDir.dir, 'local', 'in.tpl'), 'from {{ "source" }}');
    expect(await renderTemplate(tpl({ source: 'local/in.tpl' }), ctx, nothing, opts)).to.equal('from source');
    writeFileSync(join(root, 'outside.tpl'), 'no');
    const err = await renderTemplate(tpl({ source: '../../outside.tpl' }), ctx, nothing, opts).catch((e: Error) => e);
    expect(err).to.be.instanceOf(TemplateRenderError);
    expect((err as Error).message).to.equal('source ../../outside.tpl is outside the alloc dir');
    expect(await renderTemplate(tpl({ source: '../../outside.tpl' }), ctx, nothing, { ...opts, noSandbox: true })).to.equal('no');
  });

  it('error_on_missing_key fails a missing map key; without it the key prints <no value>', async () => {
    const data = '{{ $m := parseJSON `{"a":1}` }}{{ $m.b }}';
    expect(await renderTemplate(tpl({ data }), ctx, nothing, opts)).to.equal('<no value>');
    const err = await renderTemplate(tpl({ data, errorOnMissingKey: true }), ctx, nothing, opts).catch((e: Error) => e);
    expect(String(err)).to.match(/map has no entry for key "b"/);
  });

  it('env = true reads KEY=value lines: # comments, export and quotes', () => {
    expect(parseEnvFile('# c\nA=1\nexport B = two\nC="x \\"y\\"\\nz"\nD=\'$raw\'\n\n')).to.deep.equal({ A: '1', B: 'two', C: 'x "y"\nz', D: '$raw' });
    expect(() => parseEnvFile('no equals')).to.throw(TemplateRenderError, 'is not KEY=value');
  });

  it('uid and gid set the owner of the written file (root)', async function () {
    if (process.geteuid?.() !== 0) return this.skip();
    await writeRendered(tpl({ destination: 'local/owned', uid: 65534, gid: 65534 }), ctx, 'x');
    await writeRendered(tpl({ destination: 'local/mine' }), ctx, 'x');
    const st = (name: string) => statSync(join(ctx.taskDir.dir, 'local', name));
    expect([st('owned').uid, st('owned').gid]).to.deep.equal([65534, 65534]);
    expect([st('mine').uid, st('mine').gid]).to.deep.equal([0, 0]);
  });

  it('a source file that calls a Consul function fails at render, naming the function', async () => {
    writeFileSync(join(ctx.taskDir.dir, 'local', 'in.tpl'), '{{ key "x" }}');
    const err = await renderTemplate(tpl({ source: 'local/in.tpl' }), ctx, nothing, opts).catch((e: Error) => e);
    expect(String(err)).to.include('error calling key: function "key" is not supported by berth (it serves no Consul data)');
  });
});
