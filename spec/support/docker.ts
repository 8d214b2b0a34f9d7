/**
 * Docker in specs: the local Engine (`/var/run/docker.sock`), and tiny images the specs build
 * themselves (there is no public registry here): /bin/busybox and its applets as symlinks,
 * imported from a rootfs tarball.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import * as tar from 'tar';
import { dockerClient } from '../../actors/drivers/docker/docker-driver.ts';

/** The Engine the specs use. */
export const engine = dockerClient('unix:///var/run/docker.sock');

/** Whether an Engine answers. */
export async function engineAnswers(): Promise<boolean> {
  try {
    await engine.ping();
    return true;
  } catch {
    return false;
  }
}

const APPLETS = ['sh', 'echo', 'sleep', 'cat', 'true', 'false', 'httpd', 'kill', 'trap', 'id', 'hostname', 'wget', 'head', 'yes', 'ls'];

/** Imports a busybox image as `repo:tag` (replacing one of that name). */
export async function importBusybox(repo: string, tag = '1'): Promise<string> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-docker-rootfs-'));
  try {
    fs.mkdirSync(path.join(root, 'bin'));
    fs.mkdirSync(path.join(root, 'tmp'));
    fs.copyFileSync('/bin/busybox', path.join(root, 'bin', 'busybox'));
    fs.chmodSync(path.join(root, 'bin', 'busybox'), 0o755);
    for (const a of APPLETS) fs.symlinkSync('busybox', path.join(root, 'bin', a));
    const stream = Readable.from(tar.c({ cwd: root }, ['bin', 'tmp']) as unknown as AsyncIterable<Buffer>);
    const out = (await engine.importImage(stream as never, { repo, tag, changes: ['ENV PATH=/bin'] } as never)) as unknown as NodeJS.ReadableStream;
    await new Promise((resolve, reject) => engine.modem.followProgress(out, (e: Error | null) => (e ? reject(e) : resolve(undefined))));
    return `${repo}:${tag}`;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Removes an image (and nothing else), whether or not it exists. */
export async function removeImage(ref: string): Promise<void> {
  await engine
    .getImage(ref)
    .remove({ force: true })
    .catch(() => {});
}
