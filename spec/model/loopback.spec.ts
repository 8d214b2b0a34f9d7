/** The loopback rules shared by berth's HTTP listeners, as pure functions (no server). */
import { expect } from 'chai';
import { checkHostHeader, isLoopbackAddress, normaliseHost } from '../../model/loopback.ts';

describe('model: loopback by address', () => {
  it('normaliseHost: a browser’s host, lower case, brackets around IPv6, no port', () => {
    const cases: Array<[string, string]> = [
      ['::1', '[::1]'],
      ['[::1]', '[::1]'],
      ['fe80::1', '[fe80::1]'],
      ['[0:0:0:0:0:ffff:7f00:1]', '[::ffff:7f00:1]'],
      ['LOCALHOST', 'localhost'],
      ['127.1', '127.0.0.1'],
      ['0x7f000001', '127.0.0.1'],
      ['127.0.0.1:8080', '127.0.0.1'],
      ['[::ffff:7f00:1]:80', '[::ffff:7f00:1]'],
      ['host:80', 'host'],
      ['Example.COM', 'example.com'],
    ];
    for (const [h, want] of cases) expect(normaliseHost(h), h).to.equal(want);
  });

  it('normaliseHost: not a host (empty, whitespace, path, query, fragment, userinfo, backslash, unparsable, not a string)', () => {
    for (const h of ['', 'a b', 'a\tb', ' 127.0.0.1', 'a/b', 'a?b', 'a#b', 'a@b', 'a\\b', '[bad', 'a:b:c', 'x127.0.0.1'])
      expect(normaliseHost(h), JSON.stringify(h)).to.equal(undefined);
    expect(normaliseHost(42 as unknown as string)).to.equal(undefined);
  });

  it('isLoopbackAddress: localhost (with its root dot), 127.0.0.0/8, ::1 and IPv4-mapped 127.0.0.0/8 only', () => {
    for (const h of ['localhost.', 'LOCALHOST.', '127.0.0.1.', '127.255.255.255', '::ffff:127.255.255.255', '[::ffff:7f00:1]', '[::ffff:7fff:ffff]'])
      expect(isLoopbackAddress(h), h).to.equal(true);
    for (const h of [
      '[::ffff:7eff:1]',
      '[::ffff:8000:1]',
      '::ffff:7f:1',
      '::ffff:0:1',
      '126.0.0.1',
      '1.2.3.4',
      '127.0.0.1x',
      'fe80::1',
      'localhostx',
      'xlocalhost',
      '[::1',
    ])
      expect(isLoopbackAddress(h), h).to.equal(false);
  });

  it('checkHostHeader: a loopback Host with its port passes; missing, empty or foreign is refused', () => {
    expect(checkHostHeader('localhost:4646')).to.equal(true);
    expect(checkHostHeader('[::1]:4646')).to.equal(true);
    expect(checkHostHeader('')).to.equal(false);
    expect(checkHostHeader(undefined)).to.equal(false);
    expect(checkHostHeader('rebound.example:4646')).to.equal(false);
  });
});
