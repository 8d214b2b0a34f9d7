/**
 * An artifact block read the way go-getter reads it (pure): the getter (`http`, `https`,
 * `file`; a forced `getter::` prefix accepted for those), the URL without go-getter's own query
 * options (`checksum`, `archive`), the checksum, the archive format by extension, and the
 * destination: in the task dir, or in the alloc's shared `alloc/` dir (Nomad's client rule).
 * @module
 */
import path from 'node:path';
import type { Artifact } from '../../model/types.ts';
import { pathEscapesSandbox } from '../allocdir/escape.ts';
import { ArtifactError } from './errors.ts';

/**
 * Archive formats berth unpacks: tar, tar compressed with gzip (`tgz`), bzip2 (`tbz2`) or xz
 * (`txz`), zip, and a single file compressed with gzip, bzip2 or xz.
 */
export type ArchiveFormat = 'tar' | 'tgz' | 'tbz2' | 'txz' | 'zip' | 'gz' | 'bz2' | 'xz';

/** Formats go-getter knows that berth refuses (no maintained decoder chosen). */
const REFUSED_FORMATS = ['tar.zst', 'tzst', 'zst'];

/** Extensions (and `archive` option values) to formats, longest first, as go-getter matches them. */
const EXTENSIONS: [string, ArchiveFormat][] = [
  ['tar.gz', 'tgz'],
  ['tgz', 'tgz'],
  ['tar.bz2', 'tbz2'],
  ['tbz2', 'tbz2'],
  ['tar.xz', 'txz'],
  ['txz', 'txz'],
  ['tar', 'tar'],
  ['zip', 'zip'],
  ['gz', 'gz'],
  ['bz2', 'bz2'],
  ['xz', 'xz'],
];

/** Hash algorithms of `options.checksum`, by the hex length a digest has. */
export const CHECKSUM_TYPES = { md5: 32, sha1: 40, sha256: 64, sha512: 128 } as const;

/** The checksum an artifact must match: a digest, or a checksum file to look it up in. */
export type ChecksumSpec = { type: keyof typeof CHECKSUM_TYPES; value: string } | { file: string };

/** A parsed artifact. */
export interface ArtifactPlan {
  getter: 'http' | 'file';
  /** What is fetched (an http(s) URL, or an absolute path for `file`). */
  url: string;
  /** The file name the source gives (last path segment). */
  fileName: string;
  checksum?: ChecksumSpec;
  /** The archive to unpack; undefined: the file is placed as it is. */
  archive?: ArchiveFormat;
  mode: 'any' | 'file' | 'dir';
  /** The dir {@link ArtifactPlan.destination} is in: the task dir, or the alloc's shared `alloc/`. */
  root: ArtifactDestination['root'];
  /** Destination relative to its root ('' for the root itself). */
  destination: string;
  /** HTTP request headers (interpolated). */
  headers?: Record<string, string>;
}

/**
 * Reads an artifact whose source and destination are already interpolated; `dirs` are the host
 * paths its destination resolves against (placeholders when only the plan is wanted).
 */
export function planArtifact(a: Artifact, source: string, destination: string | undefined, dirs?: ArtifactDirs): ArtifactPlan {
  let src = source.trim();
  let forced: string | undefined;
  const m = /^([A-Za-z0-9]+)::(.*)$/.exec(src);
  if (m) {
    forced = m[1]!.toLowerCase();
    src = m[2]!;
  }
  if (forced && !['http', 'https', 'file'].includes(forced)) {
    throw new ArtifactError(`unsupported getter ${JSON.stringify(forced)}: berth fetches http, https and file sources`);
  }
  const options = { ...(a.options ?? {}) };
  let getter: ArtifactPlan['getter'];
  let url: string;
  let urlPath: string;
  if (src.startsWith('/')) {
    getter = 'file';
    url = src;
    urlPath = src;
  } else {
    let u: URL;
    try {
      u = new URL(src);
    } catch {
      throw new ArtifactError(`source ${JSON.stringify(source)} is not a URL or an absolute path`);
    }
    if (u.protocol === 'http:' || u.protocol === 'https:') getter = 'http';
    else if (u.protocol === 'file:') getter = 'file';
    else throw new ArtifactError(`unsupported scheme ${JSON.stringify(u.protocol.slice(0, -1))}: berth fetches http, https and file sources`);
    // go-getter's own options travel in the query; they are not sent.
    for (const k of ['checksum', 'archive']) {
      const v = u.searchParams.get(k);
      if (v !== null) {
        options[k] ??= v;
        u.searchParams.delete(k);
      }
    }
    url = getter === 'file' ? decodeURIComponent(u.pathname) : u.toString();
    urlPath = u.pathname;
  }
  const fileName = path.posix.basename(urlPath) || 'index.html';
  const mode = a.mode ?? 'any';
  if (!['any', 'file', 'dir'].includes(mode)) throw new ArtifactError(`mode ${JSON.stringify(mode)} must be any, file or dir`);
  const dest = artifactDestination(destination ?? 'local/', dirs);
  const plan: ArtifactPlan = { getter, url, fileName, mode, root: dest.root, destination: dest.path };
  if (options.checksum) plan.checksum = parseChecksum(options.checksum);
  const archive = archiveFormat(options.archive, urlPath);
  if (archive) plan.archive = archive;
  for (const k of Object.keys(options)) {
    if (k !== 'checksum' && k !== 'archive') throw new ArtifactError(`option ${JSON.stringify(k)} is not supported by berth (checksum and archive are)`);
  }
  return plan;
}

/** `type:digest` or `file:<url>`. */
export function parseChecksum(text: string): ChecksumSpec {
  const i = text.indexOf(':');
  if (i < 0) throw new ArtifactError(`invalid checksum ${JSON.stringify(text)}: expected <type>:<value> (md5, sha1, sha256, sha512) or file:<url>`);
  const type = text.slice(0, i).toLowerCase();
  const value = text.slice(i + 1).trim();
  if (type === 'file') return { file: value };
  if (!(type in CHECKSUM_TYPES)) throw new ArtifactError(`unsupported checksum type ${JSON.stringify(type)}: use md5, sha1, sha256 or sha512`);
  const len = CHECKSUM_TYPES[type as keyof typeof CHECKSUM_TYPES];
  if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(value))
    throw new ArtifactError(`invalid ${type} checksum ${JSON.stringify(value)}: expected ${len} hex digits`);
  return { type: type as keyof typeof CHECKSUM_TYPES, value: value.toLowerCase() };
}

/** The archive to unpack: `archive=false` none; a named format; else by the path's extension. */
export function archiveFormat(option: string | undefined, urlPath: string): ArchiveFormat | undefined {
  const o = option?.toLowerCase();
  if (o === 'false') return undefined;
  const name = o && o !== 'true' ? `x.${o}` : urlPath.toLowerCase();
  for (const ext of REFUSED_FORMATS) {
    if (name.endsWith(`.${ext}`)) {
      throw new ArtifactError(
        `archive format .${ext} is not supported by berth (it unpacks .tar, .tar.gz, .tgz, .tar.bz2, .tbz2, .tar.xz, .txz, .zip, .gz, .bz2 and .xz); set options.archive = "false" to fetch the file as it is`,
      );
    }
  }
  for (const [ext, format] of EXTENSIONS) if (name.endsWith(`.${ext}`)) return format;
  if (o && o !== 'true') throw new ArtifactError(`unknown archive format ${JSON.stringify(option)}`);
  return undefined;
}

/** Where an artifact goes: a dir of the alloc, and the path below it ('' for the dir itself). */
export interface ArtifactDestination {
  root: 'task' | 'alloc';
  path: string;
}

/** Host paths of the two dirs an artifact may be written into. */
export interface ArtifactDirs {
  /** The task dir (`<alloc dir>/<task>`). */
  taskDir: string;
  /** The alloc's shared dir (`<alloc dir>/alloc`). */
  sharedAllocDir: string;
}

/** Stand-ins with the real dirs' shape, for a plan made without them (as Nomad's lexical check does). */
const PLACEHOLDER_DIRS: ArtifactDirs = { taskDir: '/alloc-dir/alloc-id/task', sharedAllocDir: '/alloc-dir/alloc-id/alloc' };

/**
 * Nomad's client rule for an artifact's (interpolated) destination (`TaskEnv.ClientPath` with
 * join-on-escape, then its escape check): a relative path, or an absolute one outside both the
 * task dir and the shared alloc dir, is joined under the task dir (`/local/x` is the task's
 * `local/x`); the cleaned result must be inside the task dir or the shared alloc dir
 * (`../alloc/x`), else it is refused.
 * @throws ArtifactError "artifact destination path escapes alloc directory"
 * @example
 * artifactDestination('../alloc/data'); // { root: 'alloc', path: 'data' }
 * artifactDestination('/local/bin/');   // { root: 'task', path: 'local/bin' }
 */
export function artifactDestination(dest: string, dirs: ArtifactDirs = PLACEHOLDER_DIRS): ArtifactDestination {
  if (dest.includes('\0')) throw new ArtifactError('artifact destination path must not contain NUL');
  const outside = (p: string) => pathEscapesSandbox(dirs.taskDir, p) && pathEscapesSandbox(dirs.sharedAllocDir, p);
  const joined = path.posix.normalize(!path.posix.isAbsolute(dest) || outside(dest) ? path.posix.join(dirs.taskDir, dest) : dest);
  const rel = (base: string) => path.posix.relative(base, joined);
  if (!pathEscapesSandbox(dirs.taskDir, joined)) return { root: 'task', path: rel(dirs.taskDir) };
  if (!pathEscapesSandbox(dirs.sharedAllocDir, joined)) return { root: 'alloc', path: rel(dirs.sharedAllocDir) };
  throw new ArtifactError('artifact destination path escapes alloc directory');
}
