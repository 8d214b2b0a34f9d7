import { expect } from 'chai';
import { request, type IncomingMessage } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AllocDir, restoreSnapshot } from '../../../actors/allocdir/index.ts';
import { createSnapshotServer, type SnapshotServer } from '../../../actors/migrate/snapshot-server.ts';
import { SnapshotServerBindError } from '../../../model/errors.ts';

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Buffer; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks), res }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('snapshot server', () => {
  let client: string;
  let src: AllocDir;
  let srv: SnapshotServer;
  const id = '11111111-2222-3333-4444-555555555555';

  before(async () => {
    client = await mkdtemp(path.join(os.tmpdir(), 'berth-snapsrv-'));
    src = new AllocDir(client, id);
    src.newTaskDir('web');
    await src.build();
    await src.taskDir('web')!.build();
    await writeFile(path.join(src.dataDir, 'db'), 'rows');
    srv = await createSnapshotServer({ lookup: (a) => (a === id ? src : undefined), token: 'secret' });
  });
  after(async () => {
    await srv.close();
    await src.destroy().catch(() => undefined);
    await rm(client, { recursive: true, force: true });
  });

  it('binds 127.0.0.1 on a free port', () => {
    expect(srv.address.host).to.equal('127.0.0.1');
    expect(srv.address.port).to.be.greaterThan(0);
    expect(srv.url).to.equal(`http://127.0.0.1:${srv.address.port}`);
  });

  it('streams the snapshot with the right token; it restores elsewhere', async () => {
    const url = `${srv.url}/v1/client/allocation/${id}/snapshot`;
    const dest = new AllocDir(client, 'dest');
    await dest.build();
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        request(url, { headers: { 'X-Nomad-Token': 'secret' } }, resolve)
          .on('error', reject)
          .end(),
      );
      expect(res.statusCode).to.equal(200);
      expect(res.headers['content-type']).to.equal('application/x-tar');
      await restoreSnapshot(res, dest, { prevAllocId: id });
      expect(await readFile(path.join(dest.dataDir, 'db'), 'utf8')).to.equal('rows');
    } finally {
      await dest.destroy();
    }
  });

  it('401 without a token, 403 with a wrong one', async () => {
    const url = `${srv.url}/v1/client/allocation/${id}/snapshot`;
    expect((await get(url)).status).to.equal(401);
    expect((await get(url, { 'X-Nomad-Token': 'nope' })).status).to.equal(403);
  });

  it('404 for an unknown alloc or another path', async () => {
    expect((await get(`${srv.url}/v1/client/allocation/unknown/snapshot`, { 'X-Nomad-Token': 'secret' })).status).to.equal(404);
    expect((await get(`${srv.url}/v1/other`, { 'X-Nomad-Token': 'secret' })).status).to.equal(404);
  });

  it('close() destroys a connection stuck mid-snapshot, and is idempotent', async () => {
    const big = new AllocDir(client, 'big');
    await big.build();
    await writeFile(path.join(big.dataDir, 'blob'), Buffer.alloc(16 * 1024 * 1024));
    let failed: unknown;
    const s2 = await createSnapshotServer({ lookup: () => big, onError: (e) => (failed = e) });
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        request(`${s2.url}/v1/client/allocation/big/snapshot`, resolve).on('error', reject).end(),
      );
      res.pause(); // never read: the server's snapshot blocks on backpressure
      const gone = new Promise<void>((resolve) => res.once('close', () => resolve()));
      await new Promise((r) => setImmediate(r));
      await Promise.all([s2.close(), s2.close()]);
      await gone;
      expect(s2.server.listening).to.equal(false);
      // The aborted snapshot settles (its lock is released: destroy can proceed).
      await big.destroy();
      expect(failed).to.be.instanceOf(Error);
    } finally {
      await s2.close();
    }
  });

  it('beyond loopback it needs a token, TLS or an explicit trustedNetwork: any peer could read every alloc', async () => {
    for (const host of ['0.0.0.0', '::']) {
      try {
        const open = await createSnapshotServer({ lookup: () => undefined, host });
        await open.close();
        expect.fail(`listened on ${host} with nothing to authenticate peers`);
      } catch (e) {
        expect(e).to.be.instanceOf(SnapshotServerBindError);
        expect((e as Error).message)
          .to.match(/token/)
          .and.match(/trustedNetwork/);
      }
    }
    // Loopback spelled any way needs nothing; a token or the explicit trust lets it bind.
    for (const opts of [{ host: '127.000.000.001' }, { host: '0.0.0.0', token: 't' }, { host: '0.0.0.0', trustedNetwork: true }]) {
      const s3 = await createSnapshotServer({ lookup: () => undefined, ...opts });
      await s3.close();
    }
  });
});
