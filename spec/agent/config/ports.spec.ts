/**
 * Nomad's port range syntax in its own words, and the host's ports in use read from a
 * /proc/net-shaped dir (real files in a temp dir): TCP listeners and bound UDP sockets only.
 */
import { expect } from 'chai';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedHostPorts, HOST_PORTS_TTL_MS, hostPortsInUse, portsInTable } from '../../../agent/config/host-ports.ts';
import { MAX_VALID_PORT, PortRangeError, parsePortRanges } from '../../../agent/config/port-ranges.ts';

describe('agent config: port ranges', () => {
  it('ports and ranges in order, without duplicates, spaces allowed; the last valid port is 65536', () => {
    expect(parsePortRanges('5, 3 - 4 ,5,1-1')).to.deep.equal([5, 3, 4, 1]);
    expect(parsePortRanges('65535-65536')).to.deep.equal([65535, 65536]);
    expect(parsePortRanges(''), 'no reserved ports').to.deep.equal([]);
    expect(MAX_VALID_PORT).to.equal(65536);
  });

  it('refuses each bad part in Nomad’s words', () => {
    const cases: Array<[string, string]> = [
      ['1,,2', "can't specify empty port"],
      [' ', "can't specify empty port"],
      ['0', 'port must be > 0'],
      ['1-0', 'port must be > 0'],
      ['65537', 'port must be < 65536 but found 65537'],
      ['http', 'strconv.ParseUint: parsing "http": invalid syntax'],
      ['-5', 'strconv.ParseUint: parsing "": invalid syntax'],
      ['1-', 'strconv.ParseUint: parsing "": invalid syntax'],
      ['1.5', 'strconv.ParseUint: parsing "1.5": invalid syntax'],
      ['1-2-3', 'can only parse single port numbers or port ranges (ex. 80,100-120,150), got "1-2-3"'],
      ['9-8', 'invalid range: ending value (8) less than starting (9) value'],
    ];
    for (const [spec, msg] of cases)
      expect(() => parsePortRanges(spec), spec)
        .to.throw(PortRangeError, msg)
        .with.property('message', msg);
  });
});

describe('agent config: the host’s ports in use', () => {
  const HEAD = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
  const row = (n: number, port: number, st: string) =>
    `  ${n}: 0100007F:${port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 ${st} 00000000:00000000 00:00000000 00000000     0        0 ${1000 + n} 1`;
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-procnet-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the local port of each socket in the asked state, upper or lower case hex', () => {
    const text = [
      HEAD,
      row(0, 8080, '0A'),
      row(1, 443, '01'),
      '   2: 0100007F:1f91 00000000:0000 0a 00000000:00000000 00:00000000 00000000 0 0 1 1',
      'garbage',
      '',
    ].join('\n');
    expect(portsInTable(text, '0A')).to.deep.equal([8080, 8081]);
    expect(portsInTable(text, '01')).to.deep.equal([443]);
    expect(portsInTable('', '0A')).to.deep.equal([]);
  });

  it('the tenth socket on and lines whose columns are split by several spaces; a line that does not start with its number is none', () => {
    const text = [
      HEAD,
      row(12, 9012, '0A'),
      row(345, 9345, '0A'),
      '  13:  0100007F:2335  00000000:0000  0A  00000000:00000000 00:00000000 00000000 0 0 1 1',
      'x  14: 0100007F:2336 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 1 1',
    ].join('\n');
    expect(portsInTable(text, '0A')).to.deep.equal([9012, 9345, 9013]);
  });

  it('reads this host’s /proc/net: a TCP listener and a bound UDP socket opened here are in use', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const udp = createSocket('udp4');
    udp.bind(0, '127.0.0.1');
    await once(udp, 'listening');
    try {
      const inUse = hostPortsInUse();
      expect(inUse).to.include((server.address() as AddressInfo).port);
      expect(inUse).to.include(udp.address().port);
    } finally {
      await new Promise((done) => server.close(done));
      await new Promise<void>((done) => udp.close(done));
    }
  });

  it('every TCP listener (v4 and v6) and bound UDP socket, sorted once each; a missing table is none', () => {
    writeFileSync(join(dir, 'tcp'), [HEAD, row(0, 9000, '0A'), row(1, 9001, '01'), row(2, 22, '0A')].join('\n'));
    writeFileSync(join(dir, 'tcp6'), [HEAD, row(0, 9000, '0A'), row(1, 7000, '0A')].join('\n'));
    writeFileSync(join(dir, 'udp'), [HEAD, row(0, 53, '07'), row(1, 5353, '01')].join('\n'));
    expect(hostPortsInUse(dir)).to.deep.equal([22, 53, 7000, 9000]);
    writeFileSync(join(dir, 'udp6'), [HEAD, row(0, 10, '07'), row(1, 9, '0A')].join('\n'));
    expect(hostPortsInUse(dir)).to.deep.equal([10, 22, 53, 7000, 9000]);
    expect(hostPortsInUse(join(dir, 'none'))).to.deep.equal([]);
  });

  it('a cached read answers for its TTL on the given clock, and again after the clock steps back', () => {
    expect(HOST_PORTS_TTL_MS).to.equal(1000);
    let t = 0;
    let reads = 0;
    const ports = cachedHostPorts(
      () => t,
      () => [++reads],
      50,
    );
    expect([ports(), ports()]).to.deep.equal([[1], [1]]);
    t = 49;
    expect(ports()).to.deep.equal([1]);
    t = 50;
    expect(ports()).to.deep.equal([2]);
    t = 10;
    expect(ports()).to.deep.equal([3]);
    t = 20;
    expect(ports(), 'the read at 10 answers until 60').to.deep.equal([3]);
    const defaults = cachedHostPorts(
      () => t,
      () => [++reads],
    );
    defaults();
    t += HOST_PORTS_TTL_MS - 1;
    expect(defaults()).to.deep.equal([4]);
  });
});
