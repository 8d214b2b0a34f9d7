/**
 * Issue #35: dynamic ports as Nomad's client hands them out. A pick is random within
 * `client { min_dynamic_port, max_dynamic_port }` (Nomad's 20000..32000 by default), never a
 * port of `client { reserved { reserved_ports = "..." } }` (Nomad's syntax), nor one something on
 * the host already listens on. The agent's random source is injected: seeded here, so the ports
 * are the ones the seed names.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:net';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { AgentConfigError, readAgentConfig, resolveAgentConfig } from '../../agent/config/config.ts';
import { cachedHostPorts, HOST_PORTS_TTL_MS, hostPortsInUse, portsInTable } from '../../agent/config/host-ports.ts';
import { parsePortRanges, PortRangeError } from '../../agent/config/port-ranges.ts';
import { Rng } from '../../sim/random.ts';

const job = (id: string, count: number) => ({
  Job: {
    ID: id,
    Name: id,
    Type: 'service',
    TaskGroups: [
      {
        Name: 'g',
        Count: count,
        Networks: [{ DynamicPorts: [{ Label: 'http' }] }],
        Tasks: [
          {
            Name: 't',
            Driver: 'raw_exec',
            Config: { command: '/bin/sh', args: ['-c', "trap 'exit 0' TERM; while :; do sleep 0.1; done"] },
            KillTimeout: 1e9,
            Resources: { CPU: 20, MemoryMB: 16 },
          },
        ],
      },
    ],
  },
});

describe('agent: dynamic ports (issue #35)', function () {
  this.timeout(30_000);
  let agent: Agent | undefined;
  let held: Server | undefined;

  afterEach(async () => {
    await agent?.close();
    agent = undefined;
    await new Promise<void>((resolve) => (held ? held.close(() => resolve()) : resolve()));
    held = undefined;
  });

  const api = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${agent!.url}${path}`, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
    return r.json() as Promise<any>;
  };
  /** The job's allocs' ports, once its evaluation is done (a blocking query on it, no polling). */
  const portsOf = async (id: string, evalId: string): Promise<number[]> => {
    let index = 0;
    for (;;) {
      const r = await fetch(`${agent!.url}/v1/evaluation/${evalId}?index=${index}&wait=10s`);
      index = Number(r.headers.get('x-nomad-index'));
      if ((await r.json()).Status !== 'pending') break;
    }
    const allocs = (await api('GET', `/v1/job/${id}/allocations`)) as any[];
    return allocs.sort((a, b) => a.Name.localeCompare(b.Name)).flatMap((a) => (a.AllocatedResources.Shared.Ports ?? []).map((p: { Value: number }) => p.Value));
  };

  it('picks at random in 20000..32000 (the seeded source names them), skipping reserved ports and ports the host holds', async () => {
    const cfg = resolveAgentConfig([readAgentConfig({ client: [{ reserved: [{ reserved_ports: '22,80,8000-8100' }] }] })], { dev: true, port: 0 });
    const seeded = new Rng(35);
    agent = await startAgent(cfg, { log: () => undefined, random: () => seeded.next() });
    // What the seed names: each pick one draw, unless it lands on a port held on the host.
    const busy = new Set(hostPortsInUse());
    const rng = new Rng(35);
    const want: number[] = [];
    while (want.length < 3) {
      const p = 20000 + Math.floor(rng.next() * 12001);
      if (!busy.has(p) && !want.includes(p)) want.push(p);
    }
    const reg = await api('POST', '/v1/jobs', job('web', 3));
    const ports = await portsOf('web', reg.EvalID);
    expect(ports).to.deep.equal(want);
    expect(ports).not.to.include(20000);
  });

  it('honours min_dynamic_port, max_dynamic_port and reserved_ports, and never picks a port a listener on the host holds', async () => {
    held = createServer();
    await new Promise<void>((resolve) => held!.listen(0, '127.0.0.1', resolve));
    const p = (held.address() as { port: number }).port;
    const cfg = resolveAgentConfig(
      [
        readAgentConfig({
          client: [{ min_dynamic_port: p - 3, max_dynamic_port: p + 1, reserved: [{ reserved_ports: `${p - 3}, ${p - 2}` }] }],
        }),
      ],
      { dev: true, port: 0 },
    );
    agent = await startAgent(cfg, { log: () => undefined, random: () => 0 });
    const reg = await api('POST', '/v1/jobs', job('web', 2));
    // Random 0 would be the range's first port: reserved, then the scan's first free one.
    expect((await portsOf('web', reg.EvalID)).sort()).to.deep.equal([p - 1, p + 1]);
    // The range is used up: a third alloc finds no port.
    const more = await api('POST', '/v1/jobs', job('more', 1));
    await portsOf('more', more.EvalID);
    const ev = await api('GET', `/v1/evaluation/${more.EvalID}`);
    expect(ev.FailedTGAllocs.g.DimensionExhausted).to.deep.equal({ 'network: dynamic port selection failed': 1 });

    // The node says so: the range in NodeResources, the reserved ports as written.
    const [stub] = await api('GET', '/v1/nodes?resources=true');
    expect([stub.NodeResources.MinDynamicPort, stub.NodeResources.MaxDynamicPort]).to.deep.equal([p - 3, p + 1]);
    expect(stub.ReservedResources.Networks.ReservedHostPorts).to.equal(`${p - 3}, ${p - 2}`);
  });

  it('reads /proc/net tables: TCP listeners and bound UDP sockets', () => {
    const tcp = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0',
      '   1: 0100007F:B07D 0100007F:A55E 01 00000000:00000000 03:00000BE4 00000000     0        0 0 3 0',
    ].join('\n');
    expect(portsInTable(tcp, '0A')).to.deep.equal([8080]);
    expect(portsInTable('   5: 00000000:0044 00000000:0000 07 00000000:00000000 00:00000000 00000000 0 0 1 2 0 0', '07')).to.deep.equal([68]);
  });

  it('reads the host ports once per second, however many plans ask (issue #40)', () => {
    let t = 5000;
    let reads = 0;
    const ports = cachedHostPorts(
      () => t,
      () => [++reads],
    );
    for (let i = 0; i < 1000; i++) expect(ports()).to.deep.equal([1]);
    t += HOST_PORTS_TTL_MS - 1;
    expect(ports()).to.deep.equal([1]);
    t += 1;
    expect(ports()).to.deep.equal([2]);
    t -= 10_000; // a clock stepped back reads again rather than trusting a read from the future
    expect(ports()).to.deep.equal([3]);
    expect(reads).to.equal(3);
  });

  it("parses Nomad's port ranges and refuses bad ones in the config, naming the key", () => {
    expect(parsePortRanges('22,80,8000-8003')).to.deep.equal([22, 80, 8000, 8001, 8002, 8003]);
    expect(parsePortRanges(' 10 , 12-13,10')).to.deep.equal([10, 12, 13]);
    expect(parsePortRanges('')).to.deep.equal([]);
    for (const bad of ['80-70', '0', '70000', 'http', '1,,2', '1-2-3']) expect(() => parsePortRanges(bad), bad).to.throw(PortRangeError);
    expect(() => readAgentConfig({ client: [{ reserved: [{ reserved_ports: '80-70' }] }] })).to.throw(
      AgentConfigError,
      'client.reserved.reserved_ports: invalid range: ending value (70) less than starting (80) value',
    );
    expect(() => readAgentConfig({ client: [{ max_dynamic_port: 70000 }] })).to.throw(AgentConfigError, 'Invalid dynamic port range: max_dynamic_port=70000');
    expect(() => resolveAgentConfig([readAgentConfig({ client: [{ min_dynamic_port: 30000, max_dynamic_port: 25000 }] })], { dev: true })).to.throw(
      AgentConfigError,
      'Invalid dynamic port range: min_dynamic_port=30000 and max_dynamic_port=25000',
    );
    // One end alone is checked against the other's default.
    expect(() => resolveAgentConfig([readAgentConfig({ client: [{ min_dynamic_port: 40000 }] })], { dev: true })).to.throw(
      AgentConfigError,
      'min_dynamic_port=40000 and max_dynamic_port=32000',
    );
  });
});
