/**
 * `berth var put|get|list|purge` and `berth operator root keyring rotate|list` against a real
 * agent on loopback, run through the CLI's `main` (the binary's code, no process start per
 * command): nomad's texts, its check-and-set conflict message and the exit codes each help names.
 */
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runMain, type CliResult } from '../../support/cli.ts';
import { startVarAgent, stopVarAgent, varDataDir, type VarAgent } from './support.ts';

describe('agent: the var and keyring commands', function () {
  this.timeout(60_000);
  let a: VarAgent;
  let dir: string;
  const saved = process.env.BERTH_ADDR;
  before(async () => {
    dir = varDataDir();
    a = await startVarAgent(dir);
    process.env.BERTH_ADDR = a.agent.url;
  });
  after(async () => {
    if (saved === undefined) delete process.env.BERTH_ADDR;
    else process.env.BERTH_ADDR = saved;
    await stopVarAgent(a, dir);
  });
  const berth = (argv: string[], stdin = ''): Promise<CliResult> => runMain(argv, stdin);

  it("var put creates with nomad's message; a second put without -force is a check-and-set conflict (exit 1)", async () => {
    const made = await berth(['var', 'put', '-out=none', 'app/db', 'user=admin', 'pass=s3cret']);
    expect(made.code, made.stderr).to.equal(0);
    const index = (await a.req('GET', '/v1/var/app/db')).json.ModifyIndex;
    expect(made.stdout).to.equal(`Created variable "app/db" with modify index ${index}\n`);

    const again = await berth(['var', 'put', 'app/db', 'user=other']);
    expect(again.code).to.equal(1);
    expect(again.stdout).to.equal('');
    expect(again.stderr).to.include('Check-and-Set conflict');
    expect(again.stderr).to.include(`Your provided check-index (0) does not match the server-side index (${index}).`);
    expect(again.stderr).to.include(`-check-index=${index} flag before the positional arguments.`);

    const stale = await berth(['var', 'put', `-check-index=${index + 7}`, 'app/db', 'user=other']);
    expect([stale.code, stale.stderr.includes(`Your provided check-index (${index + 7})`)]).to.deep.equal([1, true]);
    // The item was not changed by either.
    expect((await a.req('GET', '/v1/var/app/db')).json.Items).to.deep.equal({ pass: 's3cret', user: 'admin' });

    const right = await berth(['var', 'put', `-check-index=${index}`, 'app/db', 'user=root']);
    expect(right.code, right.stderr).to.equal(0);
    // Redirected (not a terminal), nomad prints the variable as JSON.
    expect(JSON.parse(right.stdout)).to.include({ Path: 'app/db', Namespace: 'default' });
    expect(JSON.parse(right.stdout).Items).to.deep.equal({ user: 'root' });

    const forced = await berth(['var', 'put', '-force', '-out=table', 'app/db', 'user=forced', 'odd-key=1']);
    expect(forced.code).to.equal(0);
    expect(forced.stdout).to.match(/^Namespace {2,}= default\nPath {2,}= app\/db\n/);
    expect(forced.stdout).to.match(/\nItems\nodd-key = 1\nuser {4}= forced\n$/);
    expect(forced.stderr).to.include(`"odd-key" contains characters ["-"] that require the 'index' function for direct access in templates`);
  });

  it('var put reads a JSON spec from stdin (-), values from @file and -, and KEY= removes an item', async () => {
    const spec = await berth(['var', 'put', '-out=none', '-', 'extra=1'], JSON.stringify({ Path: 'spec/in', Items: { a: 'b', drop: 'x' } }));
    expect(spec.code, spec.stderr).to.equal(0);
    expect(spec.stdout).to.match(/^Created variable "spec\/in" with modify index \d+\n$/);
    expect((await a.req('GET', '/v1/var/spec/in')).json.Items).to.deep.equal({ a: 'b', drop: 'x', extra: '1' });

    const file = join(dir, 'cert.pem');
    writeFileSync(file, 'PEM DATA\n');
    const fromFile = await berth(['var', 'put', '-force', '-out=none', 'spec/in', `cert=@${file}`, 'lit=\\@not-a-file', 'piped=-'], 'from stdin');
    expect(fromFile.code, fromFile.stderr).to.equal(0);
    expect((await a.req('GET', '/v1/var/spec/in')).json.Items).to.deep.equal({ cert: 'PEM DATA\n', lit: '@not-a-file', piped: 'from stdin' });

    const idx = (await a.req('GET', '/v1/var/spec/in')).json.ModifyIndex;
    const spec2 = JSON.stringify({ Path: 'spec/in', ModifyIndex: idx, Items: { a: 'b', drop: 'x' } });
    const removed = await berth(['var', 'put', '-out=none', '-', 'drop='], spec2);
    expect(removed.code, removed.stderr).to.equal(0);
    expect((await a.req('GET', '/v1/var/spec/in')).json.Items).to.deep.equal({ a: 'b' });
  });

  it("var put refuses usage errors with exit 2, and the agent's refusals with exit 1", async () => {
    expect((await berth(['var', 'put'])).code).to.equal(2);
    const noData = await berth(['var', 'put', 'only/path']);
    expect([noData.code, noData.stderr]).to.deep.equal([2, 'berth var put: Must supply data (see berth var put --help)\n']);
    expect((await berth(['var', 'put', '-check-index=x', 'p', 'k=v'])).code).to.equal(2);
    expect((await berth(['var', 'put', 'p', 'novalue'])).code).to.equal(2);
    const bad = await berth(['var', 'put', 'nomad/other', 'k=v']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/^berth: Path: only paths at "nomad\/jobs"/);
  });

  it('var get prints JSON (redirected), a table, or one item without a newline; a missing one exits 1', async () => {
    await a.req('PUT', '/v1/var/get/me', { Items: { b: '2', a: '1' } });
    const json = await berth(['var', 'get', 'get/me']);
    expect(json.code).to.equal(0);
    const v = JSON.parse(json.stdout);
    expect(Object.keys(v)).to.deep.equal(['Namespace', 'Path', 'CreateIndex', 'ModifyIndex', 'CreateTime', 'ModifyTime', 'Items']);
    expect(Object.keys(v.Items)).to.deep.equal(['a', 'b']);
    const table = await berth(['var', 'get', '-out=table', 'get/me']);
    expect(table.stdout).to.match(/Check Index = \d+\n\nItems\na = 1\nb = 2\n$/);
    expect(await berth(['var', 'get', '-item=b', 'get/me'])).to.deep.equal({ code: 0, stdout: '2', stderr: '' });
    expect(await berth(['var', 'get', '-item=zz', 'get/me'])).to.deep.equal({ code: 1, stdout: '', stderr: 'Variable does not contain "zz" item\n' });
    expect(await berth(['var', 'get', 'not/there'])).to.deep.equal({ code: 1, stdout: '', stderr: 'Variable not found\n' });
    expect((await berth(['var', 'get'])).code).to.equal(2);
  });

  it('var list shows namespace, path and last update; -q the paths; -json the metadata', async () => {
    await a.req('PUT', '/v1/var/list/b', { Items: { k: 'v' } });
    await a.req('PUT', '/v1/var/list/a', { Items: { k: 'v' } });
    const t = await berth(['var', 'list', 'list/']);
    expect(t.code).to.equal(0);
    expect(t.stdout).to.match(/^Namespace {2}Path {4}Last Updated\ndefault {4}list\/a {2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\ndefault {4}list\/b {2}\S+\n$/);
    expect((await berth(['var', 'list', '-q', 'list/'])).stdout).to.equal('list/a\nlist/b\n');
    const j = JSON.parse((await berth(['var', 'list', '-json', 'list/'])).stdout);
    expect(j.map((v: { Path: string }) => v.Path)).to.deep.equal(['list/a', 'list/b']);
    expect((await berth(['var', 'list', 'nothing/'])).stdout).to.equal('No matching variables found\n');
    expect((await berth(['var', 'list', 'a', 'b'])).code).to.equal(2);
  });

  it("var purge deletes with nomad's message; a stale -check-index is a conflict (exit 1) and deletes nothing", async () => {
    const put = await a.req('PUT', '/v1/var/purge/me', { Items: { k: 'v' } });
    const stale = await berth(['var', 'purge', `-check-index=${put.json.ModifyIndex + 1}`, 'purge/me']);
    expect(stale.code).to.equal(1);
    expect(stale.stderr).to.include(`Your provided check-index (${put.json.ModifyIndex + 1}) does not match the server-side index (${put.json.ModifyIndex}).`);
    expect((await a.req('GET', '/v1/var/purge/me')).status).to.equal(200);
    const ok = await berth(['var', 'purge', `-check-index=${put.json.ModifyIndex}`, 'purge/me']);
    expect(ok).to.deep.equal({ code: 0, stdout: 'Successfully purged variable "purge/me"!\n', stderr: '' });
    expect((await a.req('GET', '/v1/var/purge/me')).status).to.equal(404);
    expect((await berth(['var', 'purge', 'purge/me'])).code).to.equal(0);
    expect((await berth(['var', 'purge'])).code).to.equal(2);
  });

  it("operator root keyring rotate [-full] and list show nomad's key table", async () => {
    const before = await berth(['operator', 'root', 'keyring', 'list']);
    expect(before.code).to.equal(0);
    expect(before.stdout).to.match(/^Key {7}State {3}Create Time\n[0-9a-f]{8} {2}active {2}\S+Z\n$/);
    const rot = await berth(['operator', 'root', 'keyring', 'rotate', '-full', '-verbose']);
    expect(rot.code, rot.stderr).to.equal(0);
    const id = /\n([0-9a-f-]{36}) {2}active/.exec(rot.stdout)![1]!;
    const after = await berth(['operator', 'root', 'keyring', 'list', '-verbose']);
    expect(after.stdout).to.include(`${id}  active`);
    expect(after.stdout).to.match(/inactive/);
    // Every variable was sealed again with the new key.
    for (const r of a.agent.core.state.vars.values()) expect(r.sealed.keyId).to.equal(id);
    expect((await berth(['operator', 'root', 'keyring', 'rotate', 'extra'])).code).to.equal(2);
  });

  it('var put -in=hcl and -out=hcl are usage errors (exit 2); flags may follow the arguments', async () => {
    const hcl = await berth(['var', 'put', '-in=hcl', 'usage/x', 'k=v']);
    expect([hcl.code, hcl.stderr]).to.deep.equal([2, 'berth var put: Invalid value for "-in"; berth reads json only, not "hcl" (see berth var put --help)\n']);
    expect((await berth(['var', 'put', '-out=hcl', 'usage/x', 'k=v'])).code).to.equal(2);
    expect((await a.req('GET', '/v1/var/usage/x')).status).to.equal(404);
    const after = await berth(['var', 'put', 'usage/x', 'k=v', '-out=none']);
    expect([after.code, after.stdout]).to.deep.equal([
      0,
      `Created variable "usage/x" with modify index ${(await a.req('GET', '/v1/var/usage/x')).json.ModifyIndex}\n`,
    ]);
  });
});
