/**
 * HTTP checks against a real server on loopback: the check's method and headers (Host too) are sent, a
 * redirect is not followed (3xx passes), 429 warns, 5xx is critical, the output keeps at most
 * 4 KiB of the body, a slow answer is critical at `timeout`; and a check's status starts at its
 * `initial_status`, held there by `success_before_passing`.
 */
import { expect } from 'chai';
import http from 'node:http';
import type net from 'node:net';
import { probeHttp, MAX_CHECK_OUTPUT } from '../../../actors/services/probes.ts';
import { ServiceCatalog } from '../../../actors/services/catalog.ts';
import { startServiceSet } from '../../../actors/services/service-set.ts';
import { createBus } from '../../../bus/bus.ts';
import type { ServiceCheck } from '../../../model/types.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { HeldPeriodClock } from '../../support/held-clock.ts';

describe('http checks: method, header, redirects, statuses, bounded output, timeout, initial status', function () {
  this.timeout(20_000);
  let server: http.Server;
  let port: number;
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders }[] = [];
  const hung: http.ServerResponse[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      if (req.url === '/moved') return void res.writeHead(302, { location: '/elsewhere' }).end();
      if (req.url === '/busy') return void res.writeHead(429).end('slow down');
      if (req.url === '/broken') return void res.writeHead(503).end('down');
      if (req.url === '/big') return void res.writeHead(200).end('x'.repeat(100_000));
      if (req.url === '/hang') return void hung.push(res);
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as net.AddressInfo).port;
  });
  after(async () => {
    for (const res of hung) res.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  beforeEach(() => (seen.length = 0));

  const check = (over: Partial<ServiceCheck>): ServiceCheck => ({ type: 'http', path: '/', intervalMs: 10_000, timeoutMs: 2000, ...over });
  const probe = (c: ServiceCheck) => probeHttp(c, { address: '127.0.0.1', port }, new AbortController().signal);

  it("sends the check's method and every header value", async () => {
    const r = await probe(check({ path: '/health', method: 'post', header: { 'X-Probe': ['a', 'b'], Authorization: ['Bearer t'] } }));
    expect(r.status).to.equal('passing');
    expect(seen.map((s) => [s.method, s.url, s.headers['x-probe'], s.headers.authorization])).to.deep.equal([['POST', '/health', 'a, b', 'Bearer t']]);
    expect(r.output).to.equal(`HTTP POST http://127.0.0.1:${port}/health: 200 OK Output: ok`);
  });

  it('a Host header sets the request host, as Nomad does for a virtual-host check', async () => {
    await probe(check({ header: { Host: ['app.example.com'] } }));
    expect(seen.map((s) => s.headers.host)).to.deep.equal(['app.example.com']);
  });

  it('3xx passes without following; 429 warns; 503 is critical', async () => {
    expect((await probe(check({ path: '/moved' }))).status).to.equal('passing');
    expect(seen.map((s) => s.url)).to.deep.equal(['/moved']);
    expect((await probe(check({ path: '/busy' }))).status).to.equal('warning');
    const down = await probe(check({ path: '/broken' }));
    expect([down.status, down.output]).to.deep.equal(['critical', `HTTP GET http://127.0.0.1:${port}/broken: 503 Service Unavailable Output: down`]);
  });

  it('keeps at most 4 KiB of the body; a slow answer is critical at the timeout; https to a plain server is critical', async () => {
    const big = await probe(check({ path: '/big' }));
    expect(big.output.length - big.output.indexOf('Output: ') - 'Output: '.length).to.equal(MAX_CHECK_OUTPUT);
    const slow = await probe(check({ path: '/hang', timeoutMs: 100 }));
    expect([slow.status, slow.output]).to.deep.equal(['critical', `Get "http://127.0.0.1:${port}/hang": context deadline exceeded (timeout 100 ms)`]);
    const tls = await probe(check({ protocol: 'https' }));
    expect(tls.status).to.equal('critical');
    expect(tls.output).to.match(new RegExp(`^GET "https://127\\.0\\.0\\.1:${port}/"`));
  });

  it('the status starts at initial_status (default critical) and success_before_passing holds it there', async () => {
    const clock = new HeldPeriodClock(10_000);
    const bus = createBus(() => clock.now());
    const statuses: Record<string, string[]> = {};
    const sub = bus.of('check.status').subscribe((m) => (statuses[m.check] ??= []).push(m.status));
    const catalog = new ServiceCatalog();
    const alloc = makeAlloc([{ name: 'main', driver: 'raw_exec', config: {} }]);
    const set = startServiceSet(
      { clock, bus, catalog, node: { nodeId: 'n1', datacenter: 'dc1', address: '127.0.0.1' } },
      {
        alloc,
        owner: { task: 'main', group: 'web' },
        startedAt: clock.now(),
        services: [
          {
            name: 'svc',
            portLabel: String(port),
            checks: [
              check({ name: 'warm', initialStatus: 'warning', successBeforePassing: 2 }),
              check({ name: 'plain' }),
              check({ name: 'ready', initialStatus: 'passing', path: '/broken' }),
            ],
          },
        ],
      },
    );
    try {
      await clock.nextHeld();
      while (clock.pending < 3) await clock.nextHeld();
      expect(statuses).to.deep.equal({ warm: ['warning', 'warning'], plain: ['critical', 'passing'], ready: ['passing', 'critical'] });
      await clock.fire();
      while (clock.pending < 3) await clock.nextHeld();
      expect(statuses.warm).to.deep.equal(['warning', 'warning', 'passing']);
    } finally {
      set.stop();
      sub.unsubscribe();
    }
  });
});
