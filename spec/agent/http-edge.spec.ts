/**
 * The agent's HTTP edge over raw sockets on loopback: every route of the router, every method it
 * serves and the exec upgrade, under each token state (none, wrong, right, right as a bearer
 * token), never a 5xx; unclean request targets refused with 400; Host, Origin and cross-site
 * Content-Type rules with ACLs off; a malformed `%` escape; a deeply nested body; `/ui` never
 * putting the token in its redirect.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';
import { checkJsonDepth, MAX_JSON_DEPTH } from '../../agent/http/json-depth.ts';
import { OneTimeCodes, ONE_TIME_CODE_TTL_MS } from '../../agent/http/one-time-codes.ts';
import { parseTarget } from '../../agent/http/target.ts';
import { rawRequest, WS_HEADERS } from '../support/raw-http.ts';

const portOf = (a: Agent) => Number(new URL(a.url).port);
/**
 * What Nomad answers without a token (written out here, not read from the router, so declaring a
 * route anonymous by mistake fails this spec): everything else needs the management token.
 */
const ANONYMOUS_ROUTES = new Set([
  'GET /v1/status/leader',
  'GET /v1/status/peers',
  'GET /v1/regions',
  'GET /v1/agent/health',
  'POST /v1/acl/bootstrap',
  'GET /v1/acl/token/self',
]);
/** Anonymous routes that still refuse a token they do not know (Nomad's WhoAmI: 403 "ACL token not found"). */
const REFUSES_UNKNOWN_TOKEN = new Set(['GET /v1/acl/token/self']);

/** A concrete path for a route pattern: each `:param` (and a rest `*param`) filled with `x`. */
const fill = (pattern: string) => pattern.replace(/[:*][^/]+/g, 'x');

describe('agent: HTTP edge, pure parts', () => {
  it('refuses unclean request targets with a 400 and decodes clean ones once', () => {
    for (const t of [
      '/v1\\jobs',
      '/v1/jobs#x',
      '/v1/../v1/jobs',
      '/v1/./jobs',
      '/v1/%2e%2e/jobs',
      '/v1/.%2E/jobs',
      '//v1/jobs',
      '/v1//jobs',
      'v1/jobs',
      '/v1/job/%zz',
      '/v1/job/%',
    ])
      expect(() => parseTarget(t, '127.0.0.1:1'), t).to.throw(/invalid request target/);
    expect(() => parseTarget('http://evil.example/v1/jobs', '127.0.0.1:1')).to.throw(/another host/);
    expect(parseTarget('http://127.0.0.1:1/v1/jobs?x=1', '127.0.0.1:1').segments).to.deep.equal(['v1', 'jobs']);
    expect(parseTarget('/v1/job/a%2Fb/', undefined).segments).to.deep.equal(['v1', 'job', 'a/b']);
  });

  it('bounds JSON nesting before a parse, ignoring brackets inside strings', () => {
    expect(() => checkJsonDepth('['.repeat(MAX_JSON_DEPTH + 1))).to.throw(new RegExp(`deeper than ${MAX_JSON_DEPTH}`));
    expect(() => checkJsonDepth('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH))).not.to.throw();
    expect(() => checkJsonDepth(JSON.stringify({ a: '['.repeat(10_000) }))).not.to.throw();
  });

  it('one-time codes are single use and expire', () => {
    let now = 0;
    const codes = new OneTimeCodes(() => now);
    const a = codes.issue();
    const b = codes.issue();
    expect(codes.redeem(a)).to.equal(true);
    expect(codes.redeem(a)).to.equal(false);
    now += ONE_TIME_CODE_TTL_MS;
    expect(codes.redeem(b)).to.equal(false);
    expect(codes.redeem('')).to.equal(false);
  });
});

describe('agent: HTTP edge with ACLs on', function () {
  this.timeout(60_000);
  let agent: Agent;
  before(async () => {
    const cfg = resolveAgentConfig([{ acl: { enabled: true } }], { dev: true, port: 0 });
    agent = await startAgent(cfg, { log: () => {} });
  });
  after(() => agent?.close());

  it('decides every route, method and upgrade by its own rule, for no token, a wrong one and the right one', async () => {
    const port = portOf(agent);
    expect(agent.routes.some((r) => r.method === 'UPGRADE')).to.equal(true);
    expect(agent.routes.some((r) => r.pattern === '/v1/event/stream')).to.equal(true);
    // the written-out anonymous rows name routes the agent serves (none stale, none misspelt)
    const served = new Set(agent.routes.map((r) => `${r.method} ${r.pattern}`));
    expect([...ANONYMOUS_ROUTES].filter((k) => !served.has(k))).to.deep.equal([]);
    for (const r of agent.routes) {
      const path = fill(r.pattern);
      const method = r.method === 'UPGRADE' ? 'GET' : r.method;
      const extra = r.method === 'UPGRADE' ? WS_HEADERS : {};
      for (const [state, auth] of [
        ['none', {}],
        ['wrong', { 'X-Nomad-Token': 'not-the-token' }],
        ['right', { 'X-Nomad-Token': agent.token! }],
        ['right, as a bearer token', { Authorization: `Bearer ${agent.token!}` }],
      ] as const) {
        const a = await rawRequest(port, `${method} ${path} HTTP/1.1`, { ...extra, ...auth });
        const denied = a.status === 403;
        const key = `${r.method} ${r.pattern}`;
        const right = state.startsWith('right');
        const want = ANONYMOUS_ROUTES.has(key) ? REFUSES_UNKNOWN_TOKEN.has(key) && state === 'wrong' : !right;
        expect(denied, `${r.method} ${path} token ${state}: ${a.status}`).to.equal(want);
        // whoever asks, an unknown id or a missing body is the caller's error, never the agent's
        expect(a.status, `${r.method} ${path} token ${state}`).to.be.below(500);
      }
    }
  });

  it('/ui redirects with a one-time code, never the management token', async () => {
    const a = await rawRequest(portOf(agent), 'GET /ui HTTP/1.1', { 'X-Nomad-Token': agent.token! });
    expect(a.status).to.equal(307);
    expect(a.headers.location).to.match(/\?code=/);
    expect(a.headers.location).not.to.include(agent.token!);
  });

  it('property: a generated target is refused with 400, or decided exactly as the route it reaches', async () => {
    const port = portOf(agent);
    const routes = agent.routes.filter((r) => r.method === 'GET' || r.method === 'UPGRADE');
    const bends = fc.constantFrom('none', 'pct', 'backslash', 'hash', 'dot', 'dotdot', 'pct-dot', 'double', 'absolute', 'upper');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), bends, fc.nat(20), fc.boolean(), async (r, bend, at, withToken) => {
        const segs = fill(r.pattern).split('/').slice(1);
        const i = at % segs.length;
        const s = segs[i]!;
        if (bend === 'pct') segs[i] = encodeURIComponent(s).replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`);
        if (bend === 'backslash') segs[i] = `${s}\\x`;
        if (bend === 'hash') segs[i] = `${s}#f`;
        if (bend === 'dot') segs.splice(i, 0, '.');
        if (bend === 'dotdot') segs.splice(i, 0, 'v1', '..');
        if (bend === 'pct-dot') segs.splice(i, 0, 'x', '%2E%2e');
        if (bend === 'double') segs.splice(i, 0, '');
        if (bend === 'upper') segs[i] = s.toUpperCase();
        let target = `/${segs.join('/')}`;
        if (bend === 'absolute') target = `http://evil.example${target}`;
        const headers: Record<string, string> = withToken ? { 'X-Nomad-Token': agent.token! } : {};
        const a = await rawRequest(port, `GET ${target} HTTP/1.1`, r.method === 'UPGRADE' ? { ...WS_HEADERS, ...headers } : headers);
        const unclean = ['backslash', 'hash', 'dot', 'dotdot', 'pct-dot', 'double', 'absolute'].includes(bend);
        if (unclean) return a.status === 400;
        // A clean target: it reaches the same route (pct) or, case changed, maybe no route (404).
        if (a.status === 404 && bend === 'upper') return true;
        return (a.status === 403) === (!ANONYMOUS_ROUTES.has(`${r.method} ${r.pattern}`) && !withToken);
      }),
      { seed: 33, numRuns: 150 },
    );
  });
});

describe('agent: HTTP edge with ACLs off (-dev)', function () {
  this.timeout(60_000);
  let agent: Agent;
  let port: number;
  before(async () => {
    const cfg = resolveAgentConfig([{ httpAllowedOrigins: ['https://ops.example'] }], { dev: true, port: 0 });
    agent = await startAgent(cfg, { log: () => {} });
    port = portOf(agent);
  });
  after(() => agent?.close());

  it('refuses a foreign Origin on every method and on the exec upgrade; no Origin, its own and allowed ones pass', async () => {
    const evil = { Origin: 'https://evil.example' };
    expect((await rawRequest(port, 'GET /v1/jobs HTTP/1.1', evil)).status).to.equal(403);
    expect((await rawRequest(port, 'DELETE /v1/job/x HTTP/1.1', evil)).status).to.equal(403);
    expect((await rawRequest(port, 'POST /v1/jobs HTTP/1.1', { ...evil, 'Content-Type': 'application/json' }, '{}')).status).to.equal(403);
    expect((await rawRequest(port, 'GET /v1/client/allocation/x/exec HTTP/1.1', { ...WS_HEADERS, ...evil })).status).to.equal(403);
    expect((await rawRequest(port, 'GET /v1/event/stream HTTP/1.1', { Origin: 'null' })).status).to.equal(403);
    expect((await rawRequest(port, 'GET /v1/jobs HTTP/1.1')).status).to.equal(200);
    expect((await rawRequest(port, 'GET /v1/jobs HTTP/1.1', { Origin: `http://127.0.0.1:${port}` })).status).to.equal(200);
    expect((await rawRequest(port, 'GET /v1/jobs HTTP/1.1', { Origin: 'https://ops.example' })).status).to.equal(200);
  });

  it('refuses a Host that is not loopback (DNS rebinding)', async () => {
    expect((await rawRequest(port, 'GET /v1/jobs HTTP/1.1', { Host: `evil.example:${port}` })).status).to.equal(403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`])
      expect((await rawRequest(port, 'GET /v1/jobs HTTP/1.1', { Host: host })).status, host).to.equal(200);
  });

  it('refuses, from a browser, the content types of a simple POST; none and application/json pass; tools (no Origin) may send any', async () => {
    const browser = { 'Sec-Fetch-Site': 'same-origin' };
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'Text/Plain;charset=utf-8'])
      expect((await rawRequest(port, 'POST /v1/jobs/parse HTTP/1.1', { ...browser, 'Content-Type': type }, '{}')).status, type).to.equal(415);
    for (const type of ['', 'application/json'])
      expect((await rawRequest(port, 'POST /v1/jobs/parse HTTP/1.1', { ...browser, 'Content-Type': type }, '{}')).status, type).not.to.equal(415);
    // curl --data sends a form type and no browser header: served (Nomad's docs use it)
    expect((await rawRequest(port, 'POST /v1/jobs/parse HTTP/1.1', { 'Content-Type': 'application/x-www-form-urlencoded' }, '{}')).status).not.to.equal(415);
  });

  it('answers a malformed % escape in a path parameter with 400, not 500', async () => {
    const a = await rawRequest(port, 'GET /v1/job/%E0%A4%A HTTP/1.1');
    expect(a.status).to.equal(400);
    expect(a.body).to.match(/malformed percent-escape/);
  });

  it('refuses a 4 MiB deeply nested body with a 400 naming the limit', async () => {
    const body = '['.repeat(4 * 1024 * 1024 - 16);
    const a = await rawRequest(port, 'POST /v1/jobs HTTP/1.1', { 'Content-Type': 'application/json' }, body);
    expect(a.status).to.equal(400);
    expect(a.body).to.include(`deeper than ${MAX_JSON_DEPTH} levels`);
  });
});
