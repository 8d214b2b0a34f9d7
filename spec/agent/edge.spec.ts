/**
 * The agent's HTTP edge under attack, over raw sockets (no client library cleaning the target):
 * the token check reads the route the router matched, so no spelling of a target reaches a
 * handler the token would not; browsers from other origins and rebound names are refused; odd
 * targets, malformed escapes and deep bodies get a 400.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { readAgentConfig, resolveAgentConfig } from '../../agent/config/config.ts';
import { MAX_JSON_DEPTH } from '../../agent/http/json-depth.ts';
import { rawRequest, WS_HEADERS } from '../support/raw-http.ts';

const RAW_EXEC_JOB = JSON.stringify({
  Job: { ID: 'pwn', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/usr/bin/id' } }] }] },
});

/** A concrete path for a route pattern (`:id` and a rest `*path` filled). */
const concrete = (pattern: string) => pattern.replace(/[:*][a-z]+/g, 'x');

describe('agent edge: one parse, one match, the matched route decides', function () {
  this.timeout(60_000);
  let agent: Agent;
  let port: number;

  before(async () => {
    agent = await startAgent(resolveAgentConfig([readAgentConfig({ acl: { enabled: true } })], { dev: true, port: 0 }), { log: () => {} });
    port = Number(new URL(agent.url).port);
  });
  after(() => agent?.close());

  it('the crafted snapshot path of the audit: 400, and nothing registered (the token check and the router read one parse)', async () => {
    const crafted = await rawRequest(
      port,
      'POST /v1/client/allocation/x\\..\\..\\..\\jobs#/snapshot HTTP/1.1',
      { 'Content-Type': 'application/json' },
      RAW_EXEC_JOB,
    );
    expect(crafted.status).to.equal(400);
    for (const t of ['/v1/client/allocation/x/../../../jobs', '/v1/client/allocation/x/%2e%2e/%2E%2E/jobs', '//v1/jobs', '/v1/./jobs', '/v1/jobs#x']) {
      const r = await rawRequest(port, `POST ${t} HTTP/1.1`, { 'Content-Type': 'application/json' }, RAW_EXEC_JOB);
      expect(r.status, t).to.equal(400);
    }
    expect(agent.core.state.jobs.has('pwn')).to.equal(false);
  });

  it('a malformed % escape in a path parameter is a 400, not a 500', async () => {
    const r = await rawRequest(port, 'GET /v1/job/%E0%A4%A HTTP/1.1', { 'X-Nomad-Token': agent.token! });
    expect([r.status, r.body]).to.deep.equal([400, 'invalid request target: malformed percent-escape in path segment "%E0%A4%A"']);
  });

  it('the exec WebSocket needs the token: an upgrade without one is refused before any handler runs', async () => {
    const none = await rawRequest(port, 'GET /v1/client/allocation/x/exec?task=t&command=%5B%22id%22%5D HTTP/1.1', WS_HEADERS);
    expect([none.status, none.body]).to.deep.equal([403, 'Permission denied']);
    const wrong = await rawRequest(port, 'GET /v1/client/allocation/x/exec?task=t&command=%5B%22id%22%5D HTTP/1.1', { ...WS_HEADERS, 'X-Nomad-Token': 'nope' });
    expect(wrong.status).to.equal(403);
    // with the token the upgrade reaches the exec handler, which knows no alloc x
    const right = await rawRequest(port, 'GET /v1/client/allocation/x/exec?task=t&command=%5B%22id%22%5D HTTP/1.1', {
      ...WS_HEADERS,
      'X-Nomad-Token': agent.token!,
    });
    expect(right.status).to.not.equal(403);
  });

  it('every route and method, spelled every way (fast-check): the answer without a token is the rule of the route it would be served as', async () => {
    const routes = agent.routes.filter((r) => r.method !== 'UPGRADE');
    expect(routes.length).to.be.greaterThan(40);
    // Each spelling knows what it is: the same route (escapes of plain characters), unclean (refused
    // whatever it names), or no route at all (Nomad's paths are case-sensitive).
    type Spelling = { text: string; kind: 'same' | 'unclean' | 'none' };
    const spell = (path: string, how: number, at: number): Spelling => {
      const segs = path.split('/');
      const i = 1 + (at % (segs.length - 1));
      const seg = segs[i]!;
      const withSeg = (s: string) => [...segs.slice(0, i), s, ...segs.slice(i + 1)].join('/');
      switch (how) {
        case 0:
          return { text: withSeg([...seg].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('')), kind: 'same' };
        case 1:
          return { text: `${path}/`, kind: 'same' };
        case 2:
          return { text: withSeg(`${seg}\\..`), kind: 'unclean' };
        case 3:
          return { text: `${path}#frag`, kind: 'unclean' };
        case 4:
          return { text: withSeg(`..%2f${seg}`).replace('%2f', '/'), kind: 'unclean' };
        case 5:
          return { text: withSeg(`.${'/'}${seg}`), kind: 'unclean' };
        case 6:
          return { text: withSeg(`%2e%2E/${seg}`), kind: 'unclean' };
        case 7:
          return { text: path.replace(`/${seg}`, `//${seg}`), kind: 'unclean' };
        case 8:
          return { text: `http://127.0.0.1:${port}${path}`, kind: 'same' };
        case 9:
          return { text: `http://attacker.example${path}`, kind: 'unclean' };
        default:
          // a parameter's value (x) upper-cased is still that route; a fixed word is no route
          return seg !== 'x' && /[a-z]/.test(seg) ? { text: withSeg(seg.toUpperCase()), kind: 'none' } : { text: path, kind: 'same' };
      }
    };
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: routes.length - 1 }), fc.integer({ min: 0, max: 10 }), fc.nat(), async (ri, how, at) => {
        const route = routes[ri]!;
        const s = spell(concrete(route.pattern), how, at);
        // POST and DELETE bodies are never read: the edge answers before any handler.
        const r = await rawRequest(port, `${route.method} ${s.text} HTTP/1.1`);
        if (s.kind === 'unclean') return r.status === 400;
        if (s.kind === 'none') return r.status === 404;
        return route.auth.kind === 'management' ? r.status === 403 && r.body === 'Permission denied' : r.status !== 403;
      }),
      { seed: 0x10200, numRuns: process.env.CI ? 300 : 150 },
    );
  });

  it('a body nested deeper than the bound is a 400 before it is parsed; one within it is read', async () => {
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`;
    const r = await rawRequest(port, 'POST /v1/jobs HTTP/1.1', { 'X-Nomad-Token': agent.token!, 'Content-Type': 'application/json' }, deep);
    expect(r.status).to.equal(400);
    expect(r.body).to.include(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    const ok = await rawRequest(
      port,
      'POST /v1/jobs HTTP/1.1',
      { 'X-Nomad-Token': agent.token!, 'Content-Type': 'application/json' },
      `{"a":${'['.repeat(50)}${']'.repeat(50)}}`,
    );
    expect([ok.status, ok.body]).to.deep.equal([400, 'Job must be specified']);
  });

  it('/ui sends the browser on with a one-time code, never the token', async () => {
    const r = await rawRequest(port, `GET /ui?token=${agent.token} HTTP/1.1`);
    expect(r.status).to.equal(307);
    expect(r.headers.location).to.match(/\?code=/);
    expect(r.headers.location).to.not.include(agent.token!);
    expect(r.headers['referrer-policy']).to.equal('no-referrer');
  });
});

describe('agent edge with ACLs off (the default and -dev): no web page drives the agent', function () {
  this.timeout(60_000);
  let agent: Agent;
  let port: number;
  before(async () => {
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => {} });
    port = Number(new URL(agent.url).port);
  });
  after(() => agent?.close());

  it("a page of another origin is refused (403) however it posts; the agent's own origin and tools without one pass", async () => {
    const cross = await rawRequest(port, 'POST /v1/jobs HTTP/1.1', { Origin: 'https://evil.example', 'Content-Type': 'text/plain' }, RAW_EXEC_JOB);
    expect(cross.status).to.equal(403);
    const crossJson = await rawRequest(port, 'POST /v1/jobs HTTP/1.1', { Origin: 'https://evil.example', 'Content-Type': 'application/json' }, RAW_EXEC_JOB);
    expect(crossJson.status).to.equal(403);
    const nullOrigin = await rawRequest(port, 'GET /v1/jobs HTTP/1.1', { Origin: 'null' });
    expect(nullOrigin.status).to.equal(403);
    const ws = await rawRequest(port, 'GET /v1/client/allocation/x/exec?task=t&command=%5B%22id%22%5D HTTP/1.1', {
      ...WS_HEADERS,
      Origin: 'https://evil.example',
    });
    expect(ws.status).to.equal(403);
    // a same-origin page may send JSON, but not the types a form sends without a preflight
    const own = await rawRequest(port, 'GET /v1/jobs HTTP/1.1', { Origin: `http://127.0.0.1:${port}` });
    expect(own.status).to.equal(200);
    const ownForm = await rawRequest(port, 'POST /v1/jobs HTTP/1.1', { Origin: `http://127.0.0.1:${port}`, 'Content-Type': 'text/plain' }, RAW_EXEC_JOB);
    expect(ownForm.status).to.equal(415);
    // curl --data sends a form type and no Origin: that is a tool, not a page, and is served
    const curl = await rawRequest(port, 'GET /v1/jobs HTTP/1.1', { 'Content-Type': 'application/x-www-form-urlencoded' });
    expect(curl.status).to.equal(200);
    expect(agent.core.state.jobs.has('pwn')).to.equal(false);
  });

  it('listens on loopback unless told otherwise', () => {
    expect(resolveAgentConfig([], {}).bindAddr).to.equal('127.0.0.1');
    expect(resolveAgentConfig([], { dev: true }).bindAddr).to.equal('127.0.0.1');
    expect(new URL(agent.url).hostname).to.equal('127.0.0.1');
  });

  it('bound to loopback, a Host that names another machine (DNS rebinding) is refused on every route', async () => {
    for (const host of ['attacker.example', 'attacker.example:4646', '10.0.0.1']) {
      const r = await rawRequest(port, 'GET /v1/agent/self HTTP/1.1', { Host: host });
      expect(r.status, host).to.equal(403);
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      const r = await rawRequest(port, 'GET /v1/status/leader HTTP/1.1', { Host: host });
      expect(r.status, host).to.equal(200);
    }
  });
});
