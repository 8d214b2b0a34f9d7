/**
 * Nomad's variable API on a real agent over loopback HTTP, with its real SQLite state and key
 * files: put, get, list and purge in Nomad's JSON shape; check-and-set (409 with the variable as
 * it is); Nomad's path, item and size rules (400 naming the field); blocking lists; namespaces;
 * the management token with ACLs on; and no item value in clear in `state.db` or its WAL.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { keystoreDir } from '../../../agent/variables/keyring.ts';
import { startVarAgent, stopVarAgent, varDataDir, waitersAt, type VarAgent } from './support.ts';

describe('agent: variables over HTTP', function () {
  this.timeout(60_000);
  let a: VarAgent;
  let dir: string;
  before(async () => {
    dir = varDataDir();
    a = await startVarAgent(dir);
  });
  after(() => stopVarAgent(a, dir));

  it('puts, gets, lists and purges a variable in Nomad\'s shape, paths with "/" included', async () => {
    const put = await a.req('PUT', '/v1/var/app/db/creds', { Namespace: '', Path: 'ignored', Items: { user: 'admin', pass: 'hunter2' } });
    expect(put.status, put.text).to.equal(200);
    expect(Object.keys(put.json)).to.deep.equal(['Namespace', 'Path', 'Lock', 'CreateIndex', 'CreateTime', 'ModifyIndex', 'ModifyTime', 'Items']);
    expect(put.json).to.include({ Namespace: 'default', Path: 'app/db/creds', Lock: null });
    expect(put.json.Items).to.deep.equal({ pass: 'hunter2', user: 'admin' });
    expect(Number(put.headers['x-nomad-index'])).to.equal(put.json.ModifyIndex);
    // Nanoseconds, as Nomad reports them.
    expect(put.json.CreateTime / 1e6).to.be.closeTo(Date.now(), 60_000);

    const got = await a.req('GET', '/v1/var/app/db/creds');
    expect([got.status, got.json]).to.deep.equal([200, put.json]);
    expect(Number(got.headers['x-nomad-index'])).to.equal(put.json.ModifyIndex);

    await a.req('PUT', '/v1/var/app/aaa', { Items: { k: 'v' } });
    await a.req('PUT', '/v1/var/other', { Items: { k: 'v' } });
    const list = await a.req('GET', '/v1/vars?prefix=app');
    expect(list.json.map((v: { Path: string }) => v.Path)).to.deep.equal(['app/aaa', 'app/db/creds']);
    expect(list.json[0]).not.to.have.property('Items');
    expect(Number(list.headers['x-nomad-index'])).to.be.greaterThan(put.json.ModifyIndex);

    const del = await a.req('DELETE', '/v1/var/app/db/creds');
    expect([del.status, del.text]).to.deep.equal([204, '']);
    const gone = await a.req('GET', '/v1/var/app/db/creds');
    expect([gone.status, gone.text]).to.deep.equal([404, 'variable not found']);
    expect(Number(gone.headers['x-nomad-index'])).to.equal(Number(del.headers['x-nomad-index']));
    // Deleting what is not there is done, as on Nomad.
    expect((await a.req('DELETE', '/v1/var/app/db/creds')).status).to.equal(204);
  });

  it('check-and-set: ?cas=0 refuses an existing variable, a stale index is a 409 with the variable as it is', async () => {
    const first = await a.req('PUT', '/v1/var/cas/x?cas=0', { Items: { v: '1' } });
    expect(first.status).to.equal(200);
    const again = await a.req('PUT', '/v1/var/cas/x?cas=0', { Items: { v: '2' } });
    expect(again.status).to.equal(409);
    expect(again.json).to.deep.equal(first.json);
    expect(Number(again.headers['x-nomad-index'])).to.equal(first.json.ModifyIndex);

    const stale = await a.req('PUT', `/v1/var/cas/x?cas=${first.json.ModifyIndex + 100}`, { Items: { v: '3' } });
    expect([stale.status, stale.json.Items]).to.deep.equal([409, { v: '1' }]);
    const ok = await a.req('PUT', `/v1/var/cas/x?cas=${first.json.ModifyIndex}`, { Items: { v: '4' } });
    expect([ok.status, ok.json.Items, ok.json.CreateIndex]).to.deep.equal([200, { v: '4' }, first.json.CreateIndex]);
    expect(ok.json.ModifyIndex).to.be.greaterThan(first.json.ModifyIndex);

    // A cas index on a variable that is not there: 409 with its address and no items (Nomad's zero value).
    const none = await a.req('PUT', '/v1/var/cas/none?cas=5', { Items: { v: '1' } });
    expect(none.status).to.equal(409);
    expect(none.json).to.include({ Namespace: 'default', Path: 'cas/none', ModifyIndex: 0, Items: null });

    const delStale = await a.req('DELETE', `/v1/var/cas/x?cas=${first.json.ModifyIndex}`);
    expect([delStale.status, delStale.json.Items]).to.deep.equal([409, { v: '4' }]);
    expect((await a.req('DELETE', `/v1/var/cas/x?cas=${ok.json.ModifyIndex}`)).status).to.equal(204);
    expect((await a.req('PUT', '/v1/var/cas/x?cas=nope', { Items: { v: '1' } })).status).to.equal(400);
  });

  it('refuses what Nomad refuses with a 400 naming the field: paths, items, values, the 64 KiB bound', async () => {
    const refusal = async (path: string, body: unknown) => {
      const r = await a.req('PUT', path, body);
      expect(r.status, `${path} ${r.text}`).to.equal(400);
      return r.text;
    };
    expect(await refusal('/v1/var/a%20b', { Items: { k: 'v' } })).to.match(/^Path: invalid path "a b"/);
    expect(await refusal(`/v1/var/${'p'.repeat(129)}`, { Items: { k: 'v' } })).to.match(/^Path: invalid path/);
    expect(await refusal('/v1/var/%2Flead', { Items: { k: 'v' } })).to.match(/^Path: .*leading or trailing/);
    expect(await refusal('/v1/var/nomad', { Items: { k: 'v' } })).to.match(/^Path: "nomad" is a reserved top-level directory path/);
    expect(await refusal('/v1/var/nomad/other', { Items: { k: 'v' } })).to.match(/^Path: only paths at "nomad\/jobs"/);
    expect(await refusal('/v1/var/x', { Items: {} })).to.equal('Items: variable missing required Items object');
    expect(await refusal('/v1/var/x', {})).to.equal('Items: variable missing required Items object');
    expect(await refusal('/v1/var/x', { Items: { n: 1 } })).to.equal('Items.n: must be a string');
    expect(await refusal('/v1/var/x', { Items: { k: 'v' }, Extra: 1 })).to.equal('Extra: unknown field');
    expect(await refusal('/v1/var/x', { Items: { k: 'v' }, Lock: { TTL: '15s' } })).to.match(/^Lock: variable locks are not supported/);
    expect(await refusal('/v1/var/x', { Namespace: 'bad ns', Items: { k: 'v' } })).to.match(/^Namespace: invalid namespace/);
    // 64 KiB of keys and values together: the bound itself fits, one byte more is refused.
    const fits = { k: 'v'.repeat(64 * 1024 - 1) };
    expect((await a.req('PUT', '/v1/var/big', { Items: fits })).status).to.equal(200);
    expect(await refusal('/v1/var/big', { Items: { k: 'v'.repeat(64 * 1024) } })).to.equal('Items: variables are limited to 64KiB in total size');
    expect((await a.req('PUT', '/v1/var/nomad/jobs/web', { Items: { k: 'v' } })).status).to.equal(200);
    expect((await a.req('PUT', '/v1/var/nomad/jobs', { Items: { k: 'v' } })).status).to.equal(200);
    expect((await a.req('GET', '/v1/var/never/written')).status).to.equal(404);
  });

  it('keeps namespaces apart: ?namespace= and a body Namespace, default "default", * lists them all', async () => {
    await a.req('PUT', '/v1/var/ns/shared?namespace=prod', { Items: { who: 'prod' } });
    await a.req('PUT', '/v1/var/ns/shared', { Namespace: 'dev', Items: { who: 'dev' } });
    await a.req('PUT', '/v1/var/ns/shared', { Items: { who: 'default' } });
    expect((await a.req('GET', '/v1/var/ns/shared?namespace=prod')).json.Items).to.deep.equal({ who: 'prod' });
    expect((await a.req('GET', '/v1/var/ns/shared?namespace=dev')).json.Items).to.deep.equal({ who: 'dev' });
    expect((await a.req('GET', '/v1/var/ns/shared')).json.Items).to.deep.equal({ who: 'default' });
    expect((await a.req('GET', '/v1/var/ns/shared?namespace=qa')).status).to.equal(404);
    const prod = await a.req('GET', '/v1/vars?prefix=ns/&namespace=prod');
    expect(prod.json.map((v: { Namespace: string }) => v.Namespace)).to.deep.equal(['prod']);
    const all = await a.req('GET', '/v1/vars?prefix=ns/&namespace=*');
    expect(all.json.map((v: { Namespace: string }) => v.Namespace)).to.deep.equal(['default', 'dev', 'prod']);
    expect((await a.req('DELETE', '/v1/var/ns/shared?namespace=prod')).status).to.equal(204);
    expect((await a.req('GET', '/v1/var/ns/shared?namespace=dev')).status).to.equal(200);
  });

  it('a blocking list wakes on a put, and answers at its wait without one', async () => {
    const { state } = a.agent.core;
    const at = Number((await a.req('GET', '/v1/vars')).headers['x-nomad-index']);
    const parked = a.req('GET', `/v1/vars?prefix=block&index=${at}&wait=5m`);
    await waitersAt(a.agent, 1);
    await a.req('PUT', '/v1/var/block/me', { Items: { k: 'v' } });
    const woke = await parked;
    expect(Number(woke.headers['x-nomad-index'])).to.be.greaterThan(at);
    expect(woke.json.map((v: { Path: string }) => v.Path)).to.deep.equal(['block/me']);
    expect(state.waiters.waiting).to.equal(0);

    const now = Number(woke.headers['x-nomad-index']);
    const started = Date.now();
    const timedOut = await a.req('GET', `/v1/vars?index=${now}&wait=50ms`);
    expect(Date.now() - started).to.be.at.least(45);
    expect([timedOut.status, Number(timedOut.headers['x-nomad-index'])]).to.deep.equal([200, now]);
    expect([state.waiters.waiting, state.waiters.timers]).to.deep.equal([0, 0]);
  });

  it("a blocking read waits on the variable's own index: another variable's change does not answer it", async () => {
    const put = await a.req('PUT', '/v1/var/watched', { Items: { v: '1' } });
    const at = put.json.ModifyIndex;
    let answered = false;
    const parked = a.req('GET', `/v1/var/watched?index=${at}&wait=5m`).then((r) => ((answered = true), r));
    await waitersAt(a.agent, 1);
    await a.req('PUT', '/v1/var/unrelated', { Items: { v: '1' } });
    await waitersAt(a.agent, 1); // woken, looked, parked again
    expect(answered).to.equal(false);
    await a.req('PUT', '/v1/var/watched', { Items: { v: '2' } });
    const r = await parked;
    expect([r.json.Items, Number(r.headers['x-nomad-index'])]).to.deep.equal([{ v: '2' }, r.json.ModifyIndex]);

    // A reader that hangs up leaves nothing parked.
    const req = request(`${a.agent.url}/v1/var/watched?index=${r.json.ModifyIndex}&wait=5m`);
    req.on('error', () => {});
    req.end();
    await waitersAt(a.agent, 1);
    req.destroy();
    await waitersAt(a.agent, 0);
  });

  it('keeps no item value in clear in state.db or its WAL; the key file is 0600 in a 0700 dir', async () => {
    const secret = 'correct-horse-battery-staple-4c1e';
    await a.req('PUT', '/v1/var/secret/plain', { Items: { password: secret } });
    const server = join(dir, 'server');
    const files = readdirSync(server).filter((f) => f.startsWith('state.db'));
    expect(files).to.include.members(['state.db', 'state.db-wal']);
    const keys = readdirSync(keystoreDir(dir));
    expect(keys).to.have.length(1);
    const keyFile = join(keystoreDir(dir), keys[0]!);
    const keyB64 = JSON.parse(readFileSync(keyFile, 'utf8')).Key as string;
    for (const f of files) {
      const raw = readFileSync(join(server, f));
      expect(raw.includes(Buffer.from(secret)), `${f} holds the value`).to.equal(false);
      expect(raw.includes(Buffer.from(Buffer.from(secret).toString('base64').slice(0, 20))), `${f} holds it in base64`).to.equal(false);
      expect(raw.includes(Buffer.from(keyB64)), `${f} holds the key`).to.equal(false);
    }
    // The metadata may stay in clear, as Nomad's does (and shows the scan reads the rows).
    const both = Buffer.concat(files.map((f) => readFileSync(join(server, f))));
    expect(both.includes(Buffer.from('secret/plain'))).to.equal(true);
    expect(statSync(keyFile).mode & 0o777).to.equal(0o600);
    expect(statSync(keystoreDir(dir)).mode & 0o777).to.equal(0o700);
    expect(Object.keys(JSON.parse(readFileSync(keyFile, 'utf8')))).to.deep.equal(['KeyID', 'Algorithm', 'CreateTime', 'Key']);
    // And it reads back.
    expect((await a.req('GET', '/v1/var/secret/plain')).json.Items).to.deep.equal({ password: secret });
  });

  it('refuses a doubled "/" and a write to namespace "*"; takes nomad/job-templates/<name> only; counts the 64 KiB in UTF-8 bytes', async () => {
    const put = (path: string, body: unknown) => a.req('PUT', path, body);
    const doubled = await put('/v1/var/a/%2Fb', { Items: { k: 'v' } });
    expect([doubled.status, doubled.text]).to.deep.equal([400, 'Path: invalid path "a//b": empty segment ("//")']);
    const wildcard = await put('/v1/var/x', { Namespace: '*', Items: { k: 'v' } });
    expect([wildcard.status, wildcard.text]).to.deep.equal([400, 'Namespace: can not target wildcard ("*") namespace']);
    expect((await put('/v1/var/nomad/job-templates/web', { Items: { k: 'v' } })).status).to.equal(200);
    const deeper = await put('/v1/var/nomad/job-templates/web/more', { Items: { k: 'v' } });
    expect(deeper.status).to.equal(400);
    expect(deeper.text).to.match(/^Path: "nomad\/job-templates" is a reserved directory path/);
    // 32 Ki two-byte characters: half the bound in JavaScript characters, over it in UTF-8 bytes.
    const wide = await put('/v1/var/wide', { Items: { k: '\u00e9'.repeat(32 * 1024) } });
    expect([wide.status, wide.text]).to.deep.equal([400, 'Items: variables are limited to 64KiB in total size']);
  });
});

describe('agent: variables with ACLs on', function () {
  this.timeout(60_000);
  let a: VarAgent;
  let dir: string;
  before(async () => {
    dir = varDataDir();
    a = await startVarAgent(dir, { acl: { enabled: true } });
  });
  after(() => stopVarAgent(a, dir));

  it('every variable and keyring route needs the management token', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/v1/vars'],
      ['GET', '/v1/var/a/b'],
      ['PUT', '/v1/var/a/b', { Items: { k: 'v' } }],
      ['DELETE', '/v1/var/a/b'],
      ['GET', '/v1/operator/keyring/keys'],
      ['PUT', '/v1/operator/keyring/rotate'],
    ];
    for (const [method, path, body] of routes) {
      for (const token of ['', 'not-the-token']) {
        const r = await a.req(method, path, body, { 'X-Nomad-Token': token });
        expect([r.status, r.text], `${method} ${path} with ${JSON.stringify(token)}`).to.deep.equal([403, 'Permission denied']);
      }
      const ok = await a.req(method, path, body);
      expect(ok.status, `${method} ${path} with the token`).to.be.oneOf([200, 204, 404]);
    }
  });
});
