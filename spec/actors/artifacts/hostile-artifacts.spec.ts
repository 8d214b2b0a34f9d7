/**
 * Hostile artifacts against fetchArtifact: zip slip, absolute names, symlink chains, setuid bits,
 * decompression bombs, escaping destinations, redirects to other schemes. Each must write nothing
 * outside the task dir (and, when refused, leave the task dir as it was).
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { fetchArtifact, type FetchArtifactContext } from '../../../actors/artifacts/fetch.ts';
import { ArtifactDownloadError, ArtifactError, ArtifactLimitError } from '../../../actors/artifacts/errors.ts';
import { RwLock } from '../../../actors/allocdir/lock.ts';
import { SnapshotEscapeError, SnapshotLimitError } from '../../../model/errors.ts';
import type { Artifact } from '../../../model/types.ts';
import { tarOf, tempDirs } from '../allocdir/helpers.ts';
import { refusedLeavingTree } from './refused.ts';

/** Writes a zip with python3's zipfile: entries as [name, body, unix mode (with type bits)]. */
function writeZip(file: string, entries: [string, string | { zeros: number }, number][]): void {
  const script = `
import json, sys, zipfile
out, entries = sys.argv[1], json.loads(sys.argv[2])
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for name, body, mode in entries:
        info = zipfile.ZipInfo(name)
        info.external_attr = mode << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        data = b'\\0' * body['zeros'] if isinstance(body, dict) else body.encode()
        z.writestr(info, data)
`;
  execFileSync('python3', ['-c', script, file, JSON.stringify(entries)]);
}

describe('artifacts: hostile archives and sources write nothing outside the task dir', function () {
  this.timeout(30_000);
  const tmp = tempDirs();
  let root: string;
  let taskDir: string;
  afterEach(() => tmp.cleanup());

  beforeEach(async () => {
    root = await tmp.make('berth-artifacts-');
    taskDir = path.join(root, 'alloc', 'task');
    await mkdir(path.join(taskDir, 'local'), { recursive: true });
    await mkdir(path.join(root, 'outside'));
    await writeFile(path.join(root, 'outside', 'keep'), 'untouched');
  });

  const ctx = (over: Partial<FetchArtifactContext> = {}): FetchArtifactContext => ({
    dest: { dir: taskDir, allocId: 'a1', built: true, lock: new RwLock() },
    env: {},
    maxBytes: 1024 * 1024,
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    ...over,
  });

  /** Refused with a BerthError, the whole tree (task dir included) as it was, temp files gone. */
  const refused = (a: Artifact, c = ctx()): Promise<Error> => refusedLeavingTree(root, a, c);

  it('zip slip (../ and absolute names) in a zip and in a tar.gz', async () => {
    writeZip(path.join(root, 'slip.zip'), [
      ['ok.txt', 'fine', 0o100644],
      ['../../../outside/evil', 'pwned', 0o100644],
    ]);
    expect(await refused({ source: `file://${root}/slip.zip` })).to.be.instanceOf(SnapshotEscapeError);
    await writeFile(path.join(root, 'slip.tar.gz'), gzipSync(tarOf([{ path: '../../outside/evil', body: 'x' }])));
    await writeFile(path.join(root, 'abs.tar'), tarOf([{ path: '/tmp/berth-abs-evil', body: 'x' }]));
    expect(await refused({ source: `${root}/slip.tar.gz` })).to.be.instanceOf(SnapshotEscapeError);
    expect(await refused({ source: `${root}/abs.tar` })).to.be.instanceOf(SnapshotEscapeError);
  });

  it('symlink chains: a link to a link out of the task dir, and a write through a link', async () => {
    await writeFile(
      path.join(root, 'chain.tar'),
      tarOf([
        { path: 'a', type: 'SymbolicLink', linkpath: 'b' },
        { path: 'b', type: 'SymbolicLink', linkpath: '../../../outside' },
      ]),
    );
    await writeFile(
      path.join(root, 'through.tar'),
      tarOf([
        { path: 'a', type: 'SymbolicLink', linkpath: '.' },
        { path: 'a/evil', body: 'x' },
      ]),
    );
    writeZip(path.join(root, 'link.zip'), [['etc', '/etc', 0o120777]]);
    expect(await refused({ source: `${root}/chain.tar` })).to.be.instanceOf(SnapshotEscapeError);
    expect(await refused({ source: `${root}/through.tar` })).to.be.instanceOf(SnapshotEscapeError);
    expect(await refused({ source: `${root}/link.zip` })).to.be.instanceOf(SnapshotEscapeError);
  });

  it('setuid and setgid bits are stripped; links inside the task dir are kept', async () => {
    await writeFile(
      path.join(root, 'suid.tar.gz'),
      gzipSync(
        tarOf([
          { path: 'bin/tool', body: '#!/bin/sh\n', mode: 0o6755 },
          { path: 'bin/alias', type: 'SymbolicLink', linkpath: 'tool' },
        ]),
      ),
    );
    await fetchArtifact({ source: `${root}/suid.tar.gz` }, ctx());
    const st = await stat(path.join(taskDir, 'local', 'bin', 'tool'));
    expect(st.mode & 0o7777).to.equal(0o755);
    expect(await readFile(path.join(taskDir, 'local', 'bin', 'alias'), 'utf8')).to.equal('#!/bin/sh\n');
  });

  it('bombs: a zip, a tar.gz and a .gz that expand past the bound are refused', async () => {
    const big = 8 * 1024 * 1024;
    writeZip(path.join(root, 'bomb.zip'), [['zeros', { zeros: big }, 0o100644]]);
    await writeFile(path.join(root, 'bomb.tar.gz'), gzipSync(tarOf([{ path: 'zeros', body: Buffer.alloc(big) }])));
    await writeFile(path.join(root, 'bomb.gz'), gzipSync(Buffer.alloc(big)));
    expect((await stat(path.join(root, 'bomb.zip'))).size).to.be.lessThan(64 * 1024);
    expect(await refused({ source: `${root}/bomb.zip` })).to.be.instanceOf(SnapshotLimitError);
    expect(await refused({ source: `${root}/bomb.tar.gz` })).to.be.instanceOf(SnapshotLimitError);
    expect(await refused({ source: `${root}/bomb.gz` })).to.be.instanceOf(ArtifactLimitError);
  });

  it('a destination outside the task dir, an unsupported getter or format, and a bad checksum are refused by name', async () => {
    await writeFile(path.join(root, 'f.txt'), 'hello');
    await writeFile(path.join(root, 'f.tar.zst'), 'x');
    expect((await refused({ source: `${root}/f.txt`, destination: '../../outside' })).message).to.equal('artifact destination path escapes alloc directory');
    expect((await refused({ source: `git::https://example.com/repo.git` })).message).to.match(/^unsupported getter "git"/);
    expect(await refused({ source: `${root}/f.tar.zst` })).to.be.instanceOf(ArtifactError);
    expect(await refused({ source: `${root}/f.txt`, options: { checksum: `md5:${'0'.repeat(32)}` } })).to.be.instanceOf(ArtifactDownloadError);
  });

  it('http: headers sent, redirects followed only to http(s), non-2xx refused', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers);
      if (req.url === '/hop') return void res.writeHead(302, { location: '/file.txt' }).end();
      if (req.url === '/to-file') return void res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      if (req.url === '/file.txt') return void res.writeHead(200).end('via redirect');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    try {
      await fetchArtifact({ source: `${base}/hop`, destination: 'local/got', mode: 'file', headers: { 'X-Token': 'secret' } }, ctx());
      expect(await readFile(path.join(taskDir, 'local', 'got'), 'utf8')).to.equal('via redirect');
      expect(seen[0]!['x-token']).to.equal('secret');
      expect((await refused({ source: `${base}/to-file` })).message).to.match(/refusing a redirect to "file"/);
      expect((await refused({ source: `${base}/missing` })).message).to.equal('bad response code: 404');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("http: header values are interpolated as the source is, the node's names first, then the task's env", async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    try {
      const c = ctx({ node: { 'attr.cpu.arch': 'arm64' }, env: { 'attr.cpu.arch': 'not-this', TOKEN: 't0k' } });
      await fetchArtifact(
        { source: `${base}/f`, destination: 'local/h', mode: 'file', headers: { 'X-Arch': '${attr.cpu.arch}', 'X-Token': '${TOKEN}', 'X-Kept': '${NOPE}' } },
        c,
      );
      expect([seen[0]!['x-arch'], seen[0]!['x-token'], seen[0]!['x-kept']]).to.deep.equal(['arm64', 't0k', '${NOPE}']);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('http: a redirect to another host carries no credentials (Authorization, Cookie), other headers go on', async () => {
    const seen = new Map<string, http.IncomingHttpHeaders>();
    const server = http.createServer((req, res) => {
      seen.set(`${req.headers.host?.split(':')[0]}${req.url}`, req.headers);
      if (req.url === '/away') return void res.writeHead(302, { location: `http://localhost:${port}/there` }).end();
      if (req.url === '/here') return void res.writeHead(302, { location: '/there' }).end();
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    const headers = { Authorization: 'Bearer s3cret', Cookie: 'k=v', 'X-Trace': 't1' };
    try {
      await fetchArtifact({ source: `http://127.0.0.1:${port}/here`, destination: 'local/same', mode: 'file', headers }, ctx());
      expect(seen.get('127.0.0.1/there')?.authorization, 'same host: kept').to.equal('Bearer s3cret');
      await fetchArtifact({ source: `http://127.0.0.1:${port}/away`, destination: 'local/other', mode: 'file', headers }, ctx());
      const there = seen.get('localhost/there')!;
      expect(there, 'the redirect reached the other host').to.not.equal(undefined);
      expect([there.authorization, there.cookie]).to.deep.equal([undefined, undefined]);
      expect(there['x-trace']).to.equal('t1');
      expect(seen.get('127.0.0.1/away')?.authorization).to.equal('Bearer s3cret');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('archive=false keeps an archive as a file; mode file gunzips to the given path; a file: checksum file is looked up', async () => {
    const tgz = gzipSync(tarOf([{ path: 'x', body: 'y' }]));
    await writeFile(path.join(root, 'keep.tar.gz'), tgz);
    await writeFile(path.join(root, 'conf.gz'), gzipSync('key=value\n'));
    const sum = createHash('sha256').update(tgz).digest('hex');
    await writeFile(path.join(root, 'SHA256SUMS'), `${'1'.repeat(64)}  other.tar.gz\n${sum}  keep.tar.gz\n`);
    await fetchArtifact({ source: `${root}/keep.tar.gz`, options: { archive: 'false', checksum: `file:${root}/SHA256SUMS` } }, ctx());
    expect(await readFile(path.join(taskDir, 'local', 'keep.tar.gz'))).to.deep.equal(tgz);
    await fetchArtifact({ source: `${root}/conf.gz`, destination: 'local/app.conf', mode: 'file' }, ctx());
    expect(await readFile(path.join(taskDir, 'local', 'app.conf'), 'utf8')).to.equal('key=value\n');
  });
});
