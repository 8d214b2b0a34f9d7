/**
 * DNS rebinding and tokens: loopback is decided by address however it is spelled, the Host check
 * applies to every listener without a token, any other bind needs a token; a malformed cookie is
 * a 401, not a 500.
 */
import { expect } from 'chai';
import { request } from 'node:http';
import { createBus } from '../../../bus/bus.ts';
import { InvalidViewerOptionsError } from '../../../actors/viewer/errors.ts';
import { ViewerFeed } from '../../../actors/viewer/feed.ts';
import { startViewerServer, type ViewerServeOptions } from '../../../actors/viewer/server.ts';
import { checkHostHeader, isLoopbackAddress } from '../../../index.ts';

function get(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('viewer: loopback by address, Host check, tokens', () => {
  it('isLoopbackAddress parses and normalises every spelling', () => {
    for (const h of [
      '127.0.0.1',
      '127.000.000.001',
      '127.1',
      '0x7f.0.0.1',
      '2130706433',
      '127.9.8.7',
      'localhost',
      'LocalHost',
      '::1',
      '[::1]',
      '0:0:0:0:0:0:0:1',
      '::ffff:127.0.0.1',
      '[::ffff:7f00:1]',
      '127.0.0.1:8080',
      '[::1]:80',
    ])
      expect(isLoopbackAddress(h), h).to.equal(true);
    for (const h of [
      '0.0.0.0',
      '::',
      '10.0.0.1',
      '128.0.0.1',
      'evil.com',
      'localhost.evil.com',
      '127.0.0.1.evil.com',
      '::ffff:10.0.0.1',
      '',
      ' ',
      'a b',
      'x@127.0.0.1',
      '[::2]',
    ])
      expect(isLoopbackAddress(h), h).to.equal(false);
    expect(checkHostHeader(undefined)).to.equal(false);
    expect(checkHostHeader('evil.com:80')).to.equal(false);
    expect(checkHostHeader('127.0.0.1:4646')).to.equal(true);
  });

  const serve = async (opts: ViewerServeOptions) => {
    const bus = createBus();
    const feed = new ViewerFeed({ bus, now: Date.now });
    const srv = await startViewerServer({ mode: 'live', feed, logSource: () => undefined }, opts);
    return {
      srv,
      close: async () => {
        await srv.close();
        feed.close();
        bus.close();
      },
    };
  };

  for (const host of ['::ffff:127.0.0.1', '0:0:0:0:0:0:0:1', '127.000.000.001', '127.0.0.1', '::1'])
    it(`listening on ${host} without a token, a foreign Host is refused`, async () => {
      const { srv, close } = await serve({ host });
      try {
        expect(await get(`${srv.url}api/info`, { host: 'evil.com' })).to.equal(403);
        expect(await get(`${srv.url}api/info`)).to.equal(200);
      } finally {
        await close();
      }
    });

  it('a non-loopback bind without a token is refused; with one it serves', async () => {
    for (const host of ['0.0.0.0', '::'])
      try {
        await startViewerServer({ mode: 'live', feed: undefined as never, logSource: () => undefined }, { host });
        expect.fail(`bound ${host} without a token`);
      } catch (e) {
        expect(e).to.be.instanceOf(InvalidViewerOptionsError);
        expect((e as Error).message).to.match(/token/);
      }
    const { srv, close } = await serve({ host: '0.0.0.0', token: 'tok' });
    try {
      expect(await get(`${srv.url}api/info`, { 'x-berth-token': 'tok' })).to.equal(200);
      expect(await get(`${srv.url}api/info`)).to.equal(401);
      // Any length of wrong guess is a plain 401 (the check compares digests, not raw bytes).
      for (const wrong of ['t', 'to', 'tok2', 'x'.repeat(4096)])
        expect(await get(`${srv.url}api/info`, { 'x-berth-token': wrong }), wrong.slice(0, 8)).to.equal(401);
    } finally {
      await close();
    }
  });

  it('a malformed cookie is a 401, not a 500', async () => {
    const { srv, close } = await serve({ token: 'tok' });
    try {
      const port = new URL(srv.url).port;
      expect(await get(`${srv.url}api/info`, { cookie: `berth_viewer_${port}=%E0%A4%A` })).to.equal(401);
      expect(await get(`${srv.url}api/info`, { cookie: `berth_viewer_${port}=%` })).to.equal(401);
    } finally {
      await close();
    }
  });
});
