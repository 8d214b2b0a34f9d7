/**
 * A throwaway project that depends on berth the way a user's does: berth's packed tarball,
 * installed offline from the npm cache that `npm ci` filled.
 *
 * Offline needs a lockfile (npm has no package metadata in its cache, only the tarballs `npm ci`
 * fetched), so the project gets one: berth's own entry (the tarball, by integrity) plus every
 * non-dev entry of the repository's package-lock.json, i.e. exactly the versions CI installed.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
export const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** The name berth is published under (the command stays `berth`). */
export const PKG_NAME = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { name: string }).name;

interface LockEntry {
  version?: string;
  dev?: boolean;
  [k: string]: unknown;
}

/**
 * Packs berth as `npm publish` would: `npm pack` with its hooks, so `prepack` builds dist/ and
 * writes the manifest to publish (no checkout-only scripts), and `postpack` restores the
 * checkout's. Returns the tarball's path.
 */
export async function packBerth(dest: string): Promise<string> {
  // Not --json: the hooks' own output shares stdout. The tarball is the one file in `dest`.
  await run('npm', ['pack', '--pack-destination', dest], { cwd: REPO, maxBuffer: 16 << 20 });
  const tgz = readdirSync(dest).filter((f) => f.endsWith('.tgz'));
  if (tgz.length !== 1) throw new Error(`npm pack left ${tgz.length} tarballs in ${dest}: ${tgz.join(', ')}`);
  return join(dest, tgz[0]!);
}

/** Writes package.json and package-lock.json for a project depending on `tarball` only. */
export function writeConsumerProject(dir: string, tarball: string, extra: { devDependencies?: Record<string, string> } = {}): void {
  const berthPkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    version: string;
    dependencies: Record<string, string>;
    bin: Record<string, string>;
    engines: Record<string, string>;
    license: string;
  };
  const repoLock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const file = `file:${relative(dir, tarball)}`;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  const packages: Record<string, LockEntry> = {
    '': { name: 'consumer', version: '1.0.0', dependencies: { [PKG_NAME]: file } },
    [`node_modules/${PKG_NAME}`]: {
      version: berthPkg.version,
      resolved: file,
      integrity,
      license: berthPkg.license,
      dependencies: berthPkg.dependencies,
      bin: berthPkg.bin,
      engines: berthPkg.engines,
    },
  };
  for (const [key, entry] of Object.entries(repoLock.packages)) if (key.startsWith('node_modules/') && !entry.dev) packages[key] = entry;
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module', dependencies: { [PKG_NAME]: file }, ...extra }, null, 2),
  );
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2));
}

/**
 * `npm ci --offline` in `dir`. Install scripts are skipped and better-sqlite3's compiled addon is
 * copied from the repository's install: compiling SQLite from source takes minutes, and it is
 * better-sqlite3's build, not berth's (the same version and Node ABI, so the same file).
 */
export async function installOffline(dir: string): Promise<void> {
  await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir });
  const addon = join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
  mkdirSync(join(dir, addon, '..'), { recursive: true });
  copyFileSync(join(REPO, addon), join(dir, addon));
}
