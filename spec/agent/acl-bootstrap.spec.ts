/**
 * `POST /v1/acl/bootstrap` never hands out the management token: the agent made (and logged) it
 * at start, so the bootstrap is done and the endpoint answers Nomad's 400 with the reset index,
 * every time. A reset file naming that index makes the next start mint a new token (Nomad's
 * `acl-bootstrap-reset`); a stale one is ignored.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';

describe('agent: ACL bootstrap', function () {
  this.timeout(30_000);
  let dir: string;
  let agent: Agent | undefined;
  const lines: string[] = [];
  const start = async () => {
    const cfg = resolveAgentConfig([{ acl: { enabled: true } }], { dataDir: dir, port: 0 });
    agent = await startAgent(cfg, { log: (l) => lines.push(l) });
    return agent;
  };
  const bootstrap = async (a: Agent) => {
    const r = await fetch(`${a.url}/v1/acl/bootstrap`, { method: 'POST' });
    return { status: r.status, text: await r.text() };
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-acl-boot-'));
    lines.length = 0;
  });
  afterEach(async () => {
    await agent?.close();
    agent = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 400 "already done" from the first call on, and never returns the token', async () => {
    const a = await start();
    expect(lines.some((l) => l.includes(`management token: ${a.token}`))).to.equal(true);
    const first = await bootstrap(a);
    const second = await bootstrap(a);
    for (const r of [first, second]) {
      expect(r.status).to.equal(400);
      expect(r.text).to.match(/^ACL bootstrap already done \(reset index: \d+\)$/);
      expect(r.text).not.to.include(a.token!);
    }
    // The token still works: the refusal changed nothing.
    const jobs = await fetch(`${a.url}/v1/jobs`, { headers: { 'X-Nomad-Token': a.token! } });
    expect(jobs.status).to.equal(200);
  });

  it('keeps the token across restarts; a reset file naming the reset index makes a new one', async () => {
    const a = await start();
    const old = a.token!;
    const index = /reset index: (\d+)/.exec((await bootstrap(a)).text)![1]!;
    await a.close();

    // A stale index: ignored, with a log line; the token stays.
    writeFileSync(join(dir, 'server', 'acl-bootstrap-reset'), '999999\n');
    const b = await start();
    expect(b.token).to.equal(old);
    expect(lines.some((l) => l.startsWith('ignoring ') && l.includes('acl-bootstrap-reset'))).to.equal(true);
    await b.close();

    writeFileSync(join(dir, 'server', 'acl-bootstrap-reset'), `${index}\n`);
    const c = await start();
    expect(c.token)
      .to.match(/^[0-9a-f-]{36}$/)
      .and.not.equal(old);
    expect(existsSync(join(dir, 'server', 'acl-bootstrap-reset'))).to.equal(false);
    const refused = await fetch(`${c.url}/v1/jobs`, { headers: { 'X-Nomad-Token': old } });
    expect(refused.status).to.equal(403);
    const again = await bootstrap(c);
    expect(again.status).to.equal(400);
    expect(Number(/reset index: (\d+)/.exec(again.text)![1])).to.be.greaterThan(Number(index));
  });

  it('answers "ACL support disabled" with ACLs off', async () => {
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => undefined });
    expect(await bootstrap(agent)).to.deep.equal({ status: 400, text: 'ACL support disabled' });
  });

  describe('GET /v1/acl/token/self (issue #35): the token of the request, as Nomad’s WhoAmI answers', () => {
    const self = async (a: Agent, token?: string) => {
      const r = await fetch(`${a.url}/v1/acl/token/self`, token === undefined ? {} : { headers: { 'X-Nomad-Token': token } });
      const text = await r.text();
      return { status: r.status, text, json: r.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined };
    };

    it('the management token: its own accessor id, kept across restarts; an unknown token is 403 "ACL token not found"; none is the anonymous token', async () => {
      const a = await start();
      const index = Number(/reset index: (\d+)/.exec((await bootstrap(a)).text)![1]);
      const mine = await self(a, a.token!);
      expect(mine.status).to.equal(200);
      const t = mine.json;
      expect(Object.keys(t)).to.deep.equal([
        'AccessorID',
        'SecretID',
        'Name',
        'Type',
        'Policies',
        'Roles',
        'Global',
        'CreateTime',
        'CreateIndex',
        'ModifyIndex',
      ]);
      expect(t.AccessorID)
        .to.match(/^[0-9a-f-]{36}$/)
        .and.not.equal(a.token);
      expect([t.SecretID, t.Name, t.Type, t.Policies, t.Global, t.CreateIndex, t.ModifyIndex]).to.deep.equal([
        a.token,
        'Bootstrap Token',
        'management',
        null,
        true,
        index,
        index,
      ]);
      expect(Date.parse(t.CreateTime)).to.be.within(Date.now() - 60_000, Date.now());
      // The Authorization header carries it as well.
      const bearer = await fetch(`${a.url}/v1/acl/token/self`, { headers: { Authorization: `Bearer ${a.token}` } });
      expect((await bearer.json()).AccessorID).to.equal(t.AccessorID);

      expect(await self(a, '00000000-0000-0000-0000-000000000000')).to.include({ status: 403, text: 'ACL token not found' });
      const anonymous = await self(a);
      expect(anonymous.status).to.equal(200);
      expect([anonymous.json.AccessorID, anonymous.json.Name, anonymous.json.Type, anonymous.json.Policies]).to.deep.equal([
        'anonymous',
        'Anonymous Token',
        'client',
        ['anonymous'],
      ]);

      await a.close();
      const b = await start();
      expect((await self(b, b.token!)).json).to.deep.equal(t);
    });

    it('with ACLs off: Nomad’s "ACLs disabled" pseudo-token, whatever the request carries', async () => {
      agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => undefined });
      for (const token of [undefined, 'anything']) {
        const r = await self(agent, token);
        expect(r.status).to.equal(200);
        expect([r.json.AccessorID, r.json.Name, r.json.Type, r.json.SecretID, r.json.Global]).to.deep.equal([
          'acls-disabled',
          'ACLs disabled token',
          'client',
          '',
          false,
        ]);
      }
    });
  });
});
