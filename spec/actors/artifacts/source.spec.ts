import { expect } from 'chai';
import { archiveFormat, artifactDestination, parseChecksum, planArtifact } from '../../../actors/artifacts/source.ts';
import { ArtifactError } from '../../../actors/artifacts/errors.ts';

describe('artifacts: reading an artifact block as go-getter does', () => {
  it('takes checksum and archive out of the URL query, strips a forced http:: getter, defaults to local/', () => {
    const a = { source: 'http::https://example.com/app.tgz?checksum=sha256:' + 'a'.repeat(64) + '&x=1' };
    const plan = planArtifact(a, a.source, undefined);
    expect(plan).to.deep.include({
      getter: 'http',
      url: 'https://example.com/app.tgz?x=1',
      fileName: 'app.tgz',
      archive: 'tgz',
      mode: 'any',
      destination: 'local',
    });
    expect(plan.checksum).to.deep.equal({ type: 'sha256', value: 'a'.repeat(64) });
  });

  it('file sources: a path or a file: URL', () => {
    expect(planArtifact({ source: '/srv/x.zip' }, '/srv/x.zip', '.')).to.deep.include({ getter: 'file', url: '/srv/x.zip', archive: 'zip', destination: '' });
    expect(planArtifact({ source: 'file:///srv/a%20b.txt' }, 'file:///srv/a%20b.txt', 'local/conf')).to.deep.include({
      url: '/srv/a b.txt',
      destination: 'local/conf',
    });
  });

  it('archive formats by extension, archive=false, a named format; zstd refused with what to do', () => {
    const paths = ['/a.tar', '/a.tar.gz', '/a.tgz', '/a.tar.bz2', '/a.tbz2', '/a.tar.xz', '/a.txz', '/a.zip', '/a.gz', '/a.bz2', '/a.xz', '/a.bin'];
    expect(paths.map((p) => archiveFormat(undefined, p))).to.deep.equal([
      'tar',
      'tgz',
      'tgz',
      'tbz2',
      'tbz2',
      'txz',
      'txz',
      'zip',
      'gz',
      'bz2',
      'xz',
      undefined,
    ]);
    expect(archiveFormat('false', '/a.zip')).to.equal(undefined);
    expect(archiveFormat('zip', '/download')).to.equal('zip');
    expect(archiveFormat('tar.xz', '/download')).to.equal('txz');
    expect(() => archiveFormat(undefined, '/a.tar.zst')).to.throw(ArtifactError, /\.tar\.zst is not supported by berth .* options\.archive = "false"/);
  });

  it('refuses bad checksums, other schemes and getters, unknown options, escaping destinations', () => {
    expect(parseChecksum('MD5:' + 'A'.repeat(32))).to.deep.equal({ type: 'md5', value: 'a'.repeat(32) });
    expect(parseChecksum('file:https://e.com/SUMS')).to.deep.equal({ file: 'https://e.com/SUMS' });
    expect(() => parseChecksum('sha256:abc')).to.throw(ArtifactError, /64 hex digits/);
    expect(() => parseChecksum('crc32:abcd')).to.throw(ArtifactError, /unsupported checksum type/);
    expect(() => planArtifact({ source: 's3://b/k' }, 's3://b/k', undefined)).to.throw(ArtifactError, /unsupported scheme "s3"/);
    expect(() => planArtifact({ source: 'x', options: { depth: '1' } }, 'https://e.com/x', undefined)).to.throw(ArtifactError, /option "depth"/);
    expect(artifactDestination('/local/bin/')).to.deep.equal({ root: 'task', path: 'local/bin' });
    expect(() => artifactDestination('local/../../../x')).to.throw(ArtifactError, 'artifact destination path escapes alloc directory');
  });

  // Issue #36: Nomad's client rule (TaskEnv.ClientPath, join on escape): anywhere in the task dir
  // or the alloc's shared alloc/ dir, an absolute path joined under the task dir.
  it("resolves a destination as Nomad's client does: the task dir, the shared alloc dir, nothing else", () => {
    const dirs = { taskDir: '/data/alloc/a1/web', sharedAllocDir: '/data/alloc/a1/alloc' };
    const cases: Array<[string, { root: 'task' | 'alloc'; path: string } | 'escapes']> = [
      ['local/', { root: 'task', path: 'local' }],
      ['', { root: 'task', path: '' }],
      ['/local/x', { root: 'task', path: 'local/x' }],
      ['../alloc/x', { root: 'alloc', path: 'x' }],
      ['../alloc', { root: 'alloc', path: '' }],
      ['/data/alloc/a1/web/local/y', { root: 'task', path: 'local/y' }],
      ['/data/alloc/a1/alloc/data', { root: 'alloc', path: 'data' }],
      ['/etc/passwd', { root: 'task', path: 'etc/passwd' }],
      ['../../x', 'escapes'],
      ['../other-task/local', 'escapes'],
      ['local/../../../x', 'escapes'],
    ];
    for (const [dest, want] of cases) {
      if (want === 'escapes') expect(() => artifactDestination(dest, dirs), dest).to.throw(ArtifactError, 'artifact destination path escapes alloc directory');
      else expect(artifactDestination(dest, dirs), dest).to.deep.equal(want);
    }
    expect(planArtifact({ source: 'x' }, 'https://e.com/x', '../alloc/x', dirs)).to.include({ root: 'alloc', destination: 'x' });
  });
});
