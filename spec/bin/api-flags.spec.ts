import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { AgentApi } from '../../bin/cli/nomad/api.ts';
import { runMain } from '../support/cli.ts';

/** What the recording agent saw of one request. */
interface Seen {
  method: string;
  url: string;
  token: string | undefined;
}

/**
 * The far side of the CLI: a loopback HTTP server that records each request and answers what
 * `job status` and `alloc exec` read. No berth agent: these specs are about what the CLI sends.
 */
function recordingAgent(): Promise<{ server: Server; wss: WebSocketServer; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const note = (req: IncomingMessage) => seen.push({ method: req.method!, url: req.url!, token: req.headers['x-nomad-token'] as string | undefined });
  const alloc = { ID: 'a1b2c3d4-0000-0000-0000-000000000000', TaskGroup: 'g', Job: { TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't' }] }] } };
  const server = createServer((req, res) => {
    note(req);
    const path = new URL(req.url!, 'http://x').pathname;
    const body = path === '/v1/jobs' ? [] : path === '/v1/allocations' ? [alloc] : path.startsWith('/v1/allocation/') ? alloc : null;
    res.writeHead(body === null ? 404 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws, req) => {
    note(req);
    ws.send(JSON.stringify({ exited: true, result: { exit_code: 7 } }));
    ws.close();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, wss, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen })),
  );
}

describe("the CLI's general options (nomad's -address, -token, -region, -namespace)", () => {
  let agent: Awaited<ReturnType<typeof recordingAgent>>;
  const saved = { ...process.env };
  beforeEach(async () => {
    agent = await recordingAgent();
    // The environment points elsewhere: the flags must win over it.
    process.env.BERTH_ADDR = 'http://127.0.0.1:1';
    process.env.BERTH_TOKEN = 'env-token';
    delete process.env.NOMAD_REGION;
    delete process.env.NOMAD_NAMESPACE;
  });
  afterEach(async () => {
    for (const k of ['BERTH_ADDR', 'BERTH_TOKEN', 'NOMAD_REGION', 'NOMAD_NAMESPACE'])
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    agent.wss.close();
    await new Promise<void>((r) => agent.server.close(() => r()));
  });

  it('-address and -token win over the environment; -region and -namespace go as query parameters', async () => {
    const r = await runMain(['job', 'status', '-address', agent.url, '-token=flag-token', '-region', 'eu', '-namespace=prod']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('No running jobs');
    expect(agent.seen).to.deep.equal([{ method: 'GET', url: '/v1/jobs?region=eu&namespace=prod', token: 'flag-token' }]);
  });

  it('NOMAD_REGION and NOMAD_NAMESPACE are read when no flag is given; a double-dash spelling works too', async () => {
    process.env.NOMAD_REGION = 'us';
    process.env.NOMAD_NAMESPACE = 'ops';
    const r = await runMain(['job', 'status', '--address', agent.url]);
    expect(r.code, r.stderr).to.equal(0);
    expect(agent.seen).to.deep.equal([{ method: 'GET', url: '/v1/jobs?region=us&namespace=ops', token: 'env-token' }]);
  });

  it('alloc exec: a flag value before the alloc id is not taken for the id; the socket carries the token and the query', async () => {
    const r = await runMain(['alloc', 'exec', '-address', agent.url, '-token', 't0k', '-namespace', 'prod', '-i=false', 'a1b2', '/bin/true']);
    expect(r.code, r.stderr).to.equal(7);
    const ws = agent.seen.find((s) => s.url.startsWith('/v1/client/allocation/'));
    expect(ws?.token).to.equal('t0k');
    expect(new URL(ws!.url, 'http://x').searchParams.get('namespace')).to.equal('prod');
    expect(new URL(ws!.url, 'http://x').searchParams.get('command')).to.equal('["/bin/true"]');
  });

  it('with no -address, BERTH_ADDR is the agent, else NOMAD_ADDR', async () => {
    process.env.NOMAD_ADDR = 'http://127.0.0.1:1';
    process.env.BERTH_ADDR = agent.url;
    try {
      expect((await runMain(['job', 'status'])).code).to.equal(0);
      delete process.env.BERTH_ADDR;
      process.env.NOMAD_ADDR = agent.url;
      expect((await runMain(['job', 'status'])).code).to.equal(0);
      expect(agent.seen.map((x) => x.url)).to.deep.equal(['/v1/jobs', '/v1/jobs']);
    } finally {
      if (saved.NOMAD_ADDR === undefined) delete process.env.NOMAD_ADDR;
      else process.env.NOMAD_ADDR = saved.NOMAD_ADDR;
    }
  });

  it('an unreachable agent names the address and how to point at another', async () => {
    const r = await runMain(['job', 'status']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/cannot reach the agent at http:\/\/127\.0\.0\.1:1: .*give -address or set BERTH_ADDR or NOMAD_ADDR/);
  });

  it('an alloc prefix two allocations share is refused, naming both; an exact id among them is taken', async () => {
    const two = [{ ID: 'abcd1111-0000-0000-0000-000000000000' }, { ID: 'abcd2222-0000-0000-0000-000000000000' }];
    const server = createServer((req, res) => {
      const path = new URL(req.url!, 'http://x').pathname;
      const body = path === '/v1/allocations' ? two : { ID: path.split('/').pop(), TaskStates: null };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await runMain(['alloc', 'status', '-address', address, 'abcd']);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include('Prefix matched multiple allocations: abcd1111, abcd2222');
      const api = new AgentApi({ address });
      expect((await api.resolveAlloc(two[1]!.ID)).ID).to.equal(two[1]!.ID);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
