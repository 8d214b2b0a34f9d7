/**
 * The fetching side of a remote migration, without a client: `fetchSnapshotInto` against a peer
 * on loopback that answers what a hostile (or broken) peer would, over HTTP and over HTTPS with
 * client certificates; and the small helpers that name the temp dir, the TLS server name and
 * the byte bound.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { getEventListeners } from 'node:events';
import type { TLSSocket } from 'node:tls';
import { AllocDir } from '../../../actors/allocdir/index.ts';
import { SnapshotStreamError } from '../../../actors/allocdir/errors.ts';
import {
  clientServerName,
  DEFAULT_EPHEMERAL_DISK_MB,
  fetchSnapshotInto,
  loadTls,
  migrateTempRoot,
  migrationByteLimit,
  MIGRATE_TMP_DIR,
  snapshotPath,
  type ClientTls,
} from '../../../actors/migrate/remote-stream.ts';
import { BerthError, SnapshotLimitError } from '../../../model/errors.ts';
import { makeTestPki, type TestPki } from '../../support/test-certs.ts';
import { tarOf } from '../allocdir/helpers.ts';

const PREV = 'prev-1';
const TAR = tarOf([
  { path: 'alloc/data', type: 'Directory' },
  { path: 'alloc/data/db', body: 'rows' },
]);

describe('fetchSnapshotInto: what the fetching side accepts from a peer', function () {
  this.timeout(20_000);
  let root: string;
  let dest: AllocDir;
  const servers: Server[] = [];
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'berth-fetch-'));
    dest = new AllocDir(root, 'new-1');
    await dest.build();
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    await dest.destroy().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  /** A peer answering with `handler`; the requests it saw are kept. */
  const peer = async (handler: (req: IncomingMessage, res: ServerResponse) => void, make: () => Server = () => createServer()) => {
    const seen: IncomingMessage[] = [];
    const server = make();
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      seen.push(req);
      handler(req, res);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${snapshotPath(PREV)}`, seen, server };
  };
  const fetchFrom = (url: string, token?: string, opts = {}, signal = new AbortController().signal) => fetchSnapshotInto(url, PREV, dest, token, signal, opts);
  const failure = async (p: Promise<unknown>): Promise<Error> => {
    try {
      await p;
    } catch (e) {
      return e as Error;
    }
    throw new Error('it did not fail');
  };
  /** dest as it was built: nothing restored into it. */
  const untouched = async () => expect(await readdir(dest.dataDir)).to.deep.equal([]);

  it('asks for a tar (gzip welcome), sends the token only when there is one, and counts the bytes it received', async () => {
    const p = await peer((_req, res) => res.end(TAR));
    const got = await fetchFrom(p.url, 'tok');
    expect(got.bytes).to.equal(TAR.length);
    expect(got.result.entries).to.equal(2);
    expect(await readFile(path.join(dest.dataDir, 'db'), 'utf8')).to.equal('rows');
    expect(p.seen[0]!.method).to.equal('GET');
    expect(p.seen[0]!.url).to.equal(`/v1/client/allocation/${PREV}/snapshot`);
    expect(p.seen[0]!.headers).to.include({ accept: 'application/x-tar', 'accept-encoding': 'gzip', 'x-nomad-token': 'tok' });
    await fetchFrom(p.url, undefined);
    await fetchFrom(p.url, '');
    expect(p.seen[1]!.headers['x-nomad-token']).to.equal(undefined);
    expect(p.seen[2]!.headers['x-nomad-token'], 'an empty token is no token').to.equal(undefined);
  });

  it('a body in many small writes arrives whole (the chunks are merged, none lost or repeated)', async () => {
    const big = Buffer.alloc(3 << 20);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7) & 0xff;
    const tar = tarOf([
      { path: 'alloc/data', type: 'Directory' },
      { path: 'alloc/data/big', body: big },
      { path: 'alloc/data/small', body: 'x' },
    ]);
    const p = await peer((_req, res) => {
      let at = 0;
      const step = () => {
        while (at < tar.length) {
          const n = at < 4096 ? 100 : 70_000; // tiny writes first, then socket-sized ones
          const ok = res.write(tar.subarray(at, at + n));
          at += n;
          if (!ok) return void res.once('drain', step);
        }
        res.end();
      };
      step();
    });
    const got = await fetchFrom(p.url);
    expect(got.bytes).to.equal(tar.length);
    expect((await readFile(path.join(dest.dataDir, 'big'))).equals(big)).to.equal(true);
    expect(await readFile(path.join(dest.dataDir, 'small'), 'utf8')).to.equal('x');
  });

  it('gunzips only what the response declares as gzip (any case, any spaces); refuses other encodings, naming them', async () => {
    const gz = gzipSync(TAR);
    for (const enc of [' GZip ', 'gzip']) {
      const p = await peer((_req, res) => {
        res.writeHead(200, { 'content-encoding': enc });
        res.end(gz);
      });
      expect((await fetchFrom(p.url)).result.entries, enc).to.equal(2);
      expect(await readFile(path.join(dest.dataDir, 'db'), 'utf8')).to.equal('rows');
    }
    // Undeclared gzip is refused by the restore, and nothing is written.
    const undeclared = await peer((_req, res) => res.end(gz));
    await rm(path.join(dest.dataDir, 'db'));
    expect((await failure(fetchFrom(undeclared.url))).message).to.match(/compressed but was not declared/);
    await untouched();
    for (const enc of ['br', 'deflate', 'gzip, br']) {
      const q = await peer((_req, res) => {
        res.writeHead(200, { 'content-encoding': enc });
        res.end(gzipSync(TAR));
      });
      const err = await failure(fetchFrom(q.url));
      expect(err, enc).to.be.instanceOf(BerthError);
      expect(err.message, enc).to.equal(`error getting snapshot from previous alloc "${PREV}": unsupported Content-Encoding ${JSON.stringify(enc)}`);
      await untouched();
    }
    const identity = await peer((_req, res) => {
      res.writeHead(200, { 'content-encoding': 'Identity' });
      res.end(TAR);
    });
    expect((await fetchFrom(identity.url)).result.entries).to.equal(2);
  });

  it('a non-200 answer is an error with its status and the start of its body; nothing is written', async () => {
    const cases: Array<[number, string, string]> = [
      [403, 'Permission denied\n', 'unexpected response code: 403 (Permission denied)'],
      [404, '', 'unexpected response code: 404'],
      [500, '   \n', 'unexpected response code: 500'],
      [204, '', 'unexpected response code: 204'],
    ];
    for (const [status, body, want] of cases) {
      const p = await peer((_req, res) => {
        res.writeHead(status);
        res.end(body);
      });
      const err = await failure(fetchFrom(p.url));
      expect(err, String(status)).to.be.instanceOf(BerthError);
      expect(err.message, String(status)).to.equal(`error getting snapshot from previous alloc "${PREV}": ${want}`);
    }
    // A long error body is cut at 4 KiB.
    const long = await peer((_req, res) => {
      res.writeHead(500);
      res.end('e'.repeat(10_000));
    });
    const err = await failure(fetchFrom(long.url));
    expect(err.message).to.equal(`error getting snapshot from previous alloc "${PREV}": unexpected response code: 500 (${'e'.repeat(4096)})`);
    await untouched();
  });

  it('an error body is cut at 4 KiB however it arrives; a peer stalling there is not waited for; one cut short gives no text', async () => {
    const prefix = `error getting snapshot from previous alloc "${PREV}": unexpected response code: 500`;
    // Two chunks (chunked encoding): the second crosses the bound.
    const two = await peer((_req, res) => {
      res.writeHead(500);
      res.write('a'.repeat(100));
      res.end('e'.repeat(10_000));
    });
    expect((await failure(fetchFrom(two.url))).message).to.equal(`${prefix} (${'a'.repeat(100)}${'e'.repeat(3996)})`);
    // Exactly the bound, then nothing more and no end.
    const stall = await peer((_req, res) => {
      res.writeHead(500);
      res.write('s'.repeat(4096));
    });
    expect((await failure(fetchFrom(stall.url))).message).to.equal(`${prefix} (${'s'.repeat(4096)})`);
    // The connection cut in the middle of the body: the status, and the cut as the cause.
    const cut = await peer((_req, res) => {
      res.writeHead(500, { 'content-length': '10000' });
      res.write('partial', () => setImmediate(() => res.socket?.destroy()));
    });
    const err = await failure(fetchFrom(cut.url));
    expect(err.message).to.equal(prefix);
    expect((err as Error & { cause?: Error }).cause).to.be.instanceOf(Error);
  });

  it('a hostile entry is refused as soon as it arrives, while the peer still holds the response open', async () => {
    const p = await peer((_req, res) => {
      res.writeHead(200);
      res.write(tarOf([{ path: 'alloc/data/../../../evil', body: 'x'.repeat(1000) }], { end: false }));
    });
    const err = await failure(fetchFrom(p.url));
    expect(err).to.be.instanceOf(BerthError);
    expect(err.message).to.equal('archive contains object that escapes alloc dir');
    await untouched();
  });

  it('leaves no abort listener on the caller’s signal once the transfer is over', async () => {
    let closed!: () => void;
    const peerSawClose = new Promise<void>((r) => (closed = r));
    const p = await peer((req, res) => {
      req.socket.on('close', closed);
      res.end(TAR);
    });
    const ac = new AbortController();
    await fetchFrom(p.url, undefined, {}, ac.signal);
    await peerSawClose;
    expect(getEventListeners(ac.signal, 'abort')).to.deep.equal([]);
  });

  it('a restore that fails mid-body closes the connection: an endless body is not read on', async () => {
    let closed!: () => void;
    const peerSawClose = new Promise<void>((r) => (closed = r));
    // A file far larger than the bound, and more bytes after it for as long as the socket takes them.
    const start = tarOf(
      [
        { path: 'alloc/data', type: 'Directory' },
        { path: 'alloc/data/big', body: Buffer.alloc(8 << 20) },
      ],
      { end: false },
    );
    const p = await peer((req, res) => {
      req.socket.on('close', closed);
      res.writeHead(200);
      res.write(start);
      const more = () => {
        while (!res.destroyed && res.write(Buffer.alloc(64 * 1024))) {
          /* fill the socket */
        }
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    });
    expect(await failure(fetchFrom(p.url, undefined, { maxBytes: 1024 }))).to.be.instanceOf(SnapshotLimitError);
    await peerSawClose;
    await untouched();
  });

  it('a peer that is not there, or cuts the body, is a named error; the bound is the caller’s maxBytes', async () => {
    const gone = await peer(() => undefined);
    const url = gone.url;
    await new Promise((r) => gone.server.close(r));
    const refused = await failure(fetchFrom(url));
    expect(refused).to.be.instanceOf(BerthError);
    expect(refused.message).to.match(new RegExp(`^error getting snapshot from previous alloc "${PREV}": connect ECONNREFUSED`));
    expect((refused as BerthError & { cause?: NodeJS.ErrnoException }).cause?.code).to.equal('ECONNREFUSED');

    const cut = await peer((_req, res) => {
      res.writeHead(200, { 'content-length': String(TAR.length) });
      res.write(TAR.subarray(0, 700));
      setImmediate(() => res.socket?.destroy());
    });
    // Cut before the restore even began to read: an error at once, not a wait for data that never comes.
    const cutErr = await failure(fetchFrom(cut.url));
    expect(cutErr).to.be.instanceOf(SnapshotStreamError);
    expect(cutErr.message).to.equal(`error streaming previous alloc "${PREV}" for new alloc "new-1": aborted`);
    await untouched();

    const big = tarOf([
      { path: 'alloc/data', type: 'Directory' },
      { path: 'alloc/data/big', body: Buffer.alloc(4096) },
    ]);
    const p = await peer((_req, res) => res.end(big));
    expect(await failure(fetchFrom(p.url, undefined, { maxBytes: 4095 }))).to.be.instanceOf(SnapshotLimitError);
    expect((await fetchFrom(p.url, undefined, { maxBytes: 4096 })).result.bytes).to.equal(4096);
  });

  it('an abort before or during the transfer rejects with its reason and stops the request', async () => {
    const before = new AbortController();
    before.abort(new Error('stop first'));
    const p = await peer((_req, res) => res.end(TAR));
    expect((await failure(fetchFrom(p.url, undefined, {}, before.signal))).message).to.equal('stop first');
    expect(p.seen).to.have.length(0);

    let closed!: () => void;
    const peerSawClose = new Promise<void>((r) => (closed = r));
    const hang = await peer((req, res) => {
      res.writeHead(200);
      res.write(TAR.subarray(0, 512));
      req.socket.on('close', closed);
    });
    const ac = new AbortController();
    const run = fetchFrom(hang.url, undefined, {}, ac.signal);
    while (hang.seen.length === 0) await new Promise((r) => setImmediate(r));
    ac.abort('user gave up');
    expect(await failure(run)).to.equal('user gave up');
    await peerSawClose;
    await untouched();

    // Aborted while the peer has not answered yet (the request in flight is destroyed).
    const silent = await peer(() => undefined);
    const ac2 = new AbortController();
    const run2 = fetchFrom(silent.url, undefined, {}, ac2.signal);
    while (silent.seen.length === 0) await new Promise((r) => setImmediate(r));
    ac2.abort(new Error('no answer'));
    expect((await failure(run2)).message).to.equal('no answer');
  });

  describe('over HTTPS', () => {
    let pkiDir: string;
    let pki: TestPki;
    before(async () => {
      pkiDir = await mkdtemp(path.join(os.tmpdir(), 'berth-fetch-pki-'));
      pki = await makeTestPki(pkiDir);
    });
    after(() => rm(pkiDir, { recursive: true, force: true }));

    const tlsPeer = async (cert = pki.serverCertFile, key = pki.serverKeyFile) => {
      const p = await peer(
        (_req, res) => res.end(TAR),
        () =>
          createHttpsServer({ ca: [readFileSync(pki.caFile)], cert: readFileSync(cert), key: readFileSync(key), requestCert: true, rejectUnauthorized: true }),
      );
      return { ...p, url: p.url.replace(/^http:/, 'https:') };
    };

    it('loadTls reads the three files, with the server name unless verifyServerHostname is false; a missing file is a named error', async () => {
      const files = { caFile: pki.caFile, certFile: pki.clientCertFile, keyFile: pki.clientKeyFile };
      const t = await loadTls(files, 'client.eu.nomad');
      expect(t.ca.equals(await readFile(pki.caFile))).to.equal(true);
      expect(t.cert.equals(await readFile(pki.clientCertFile))).to.equal(true);
      expect(t.key.equals(await readFile(pki.clientKeyFile))).to.equal(true);
      expect(t.serverName).to.equal('client.eu.nomad');
      expect((await loadTls({ ...files, verifyServerHostname: true }, 'n')).serverName).to.equal('n');
      expect(await loadTls({ ...files, verifyServerHostname: false }, 'n')).to.not.have.property('serverName');
      const err = await failure(loadTls({ ...files, keyFile: path.join(pkiDir, 'nope.key') }, 'n'));
      expect(err).to.be.instanceOf(BerthError);
      expect(err.message).to.match(/^cannot read TLS files: .*nope\.key/);
      expect((err.cause as NodeJS.ErrnoException).code).to.equal('ENOENT');
    });

    it('presents its certificate, trusts only the given CA, and checks the name when asked', async () => {
      const files = { caFile: pki.caFile, certFile: pki.clientCertFile, keyFile: pki.clientKeyFile };
      const good = await tlsPeer();
      const strict: ClientTls = await loadTls(files, clientServerName('global'));
      expect((await fetchFrom(good.url, undefined, { tls: strict })).result.entries).to.equal(2);
      expect((good.seen[0]!.socket as TLSSocket).servername, 'sent as SNI').to.equal('client.global.nomad');
      await rm(path.join(dest.dataDir, 'db'));
      // A peer whose certificate names another role: refused with the name check, accepted without.
      const other = await tlsPeer(pki.otherNameCertFile, pki.otherNameKeyFile);
      const err = await failure(fetchFrom(other.url, undefined, { tls: strict }));
      expect(err.message).to.match(/client\.global\.nomad/);
      await untouched();
      const lax = await loadTls({ ...files, verifyServerHostname: false }, clientServerName('global'));
      expect((await fetchFrom(other.url, undefined, { tls: lax })).result.entries).to.equal(2);
      expect((other.seen.at(-1)!.socket as TLSSocket).servername, 'no name, no SNI').to.equal(false);
      await rm(path.join(dest.dataDir, 'db'));
      // Another CA's client certificate is refused by the peer; trusting another CA refuses the peer.
      const stranger = { ...strict, cert: await readFile(pki.strangerCertFile), key: await readFile(pki.strangerKeyFile) };
      expect(await failure(fetchFrom(good.url, undefined, { tls: stranger }))).to.be.instanceOf(BerthError);
      const wrongCa = { ...strict, ca: await readFile(pki.strangerCertFile) };
      const e2 = await failure(fetchFrom(good.url, undefined, { tls: wrongCa }));
      expect(e2.message).to.match(/error getting snapshot from previous alloc/);
      // Without client TLS at all, an https peer is not trusted (the system CAs do not know it).
      expect(await failure(fetchFrom(good.url))).to.be.instanceOf(BerthError);
      await untouched();
    });
  });

  it('names: the temp root, the TLS role name, the snapshot path and the byte bound', () => {
    expect(migrateTempRoot('/var/berth/alloc', 'p1')).to.equal(`/var/berth/alloc/${MIGRATE_TMP_DIR}/p1`);
    expect(MIGRATE_TMP_DIR).to.equal('.migrate');
    expect(clientServerName(undefined)).to.equal('client.global.nomad');
    expect(clientServerName('')).to.equal('client.global.nomad');
    expect(clientServerName('eu-west')).to.equal('client.eu-west.nomad');
    expect(snapshotPath('a/b c')).to.equal('/v1/client/allocation/a%2Fb%20c/snapshot');
    expect(DEFAULT_EPHEMERAL_DISK_MB).to.equal(300);
    expect(migrationByteLimit(undefined)).to.equal(300 * 1024 * 1024);
    expect(migrationByteLimit(10)).to.equal(10 * 1024 * 1024);
  });
});
