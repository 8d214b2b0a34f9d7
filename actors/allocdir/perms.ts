/**
 * Nomad's directory permission rules: "chmod 0777" means `desired | 0777` (sticky kept, umask
 * bypassed), and as root the directory is handed to `nobody`.
 * @module
 */
import { chmod, chown, mkdir, readFile } from 'node:fs/promises';
import { BerthError } from '../../model/errors.ts';
import { errorText } from '../../model/error-text.ts';

/** True when berth runs as root (mounts and chowns happen only then). */
export function isRoot(): boolean {
  return process.geteuid?.() === 0;
}

let nobody: Promise<{ uid: number; gid: number }> | undefined;

/** uid/gid of user `nobody`, read once from /etc/passwd. */
export function nobodyIds(): Promise<{ uid: number; gid: number }> {
  nobody ??= readFile('/etc/passwd', 'utf8').then(
    (text) => {
      for (const line of text.split('\n')) {
        const f = line.split(':');
        if (f[0] === 'nobody' && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
      }
      throw new BerthError('Unable to find nobody user: no "nobody" in /etc/passwd');
    },
    (err: Error) => {
      throw new BerthError(`Unable to find nobody user: ${err.message}`);
    },
  );
  return nobody;
}

/**
 * uid/gid of the user `name` (a name, or a numeric uid) from /etc/passwd; a numeric uid with no
 * entry gets itself as gid. Undefined when there is no such user. Used to give restored files
 * to the task's user.
 */
export async function userIds(name: string): Promise<{ uid: number; gid: number } | undefined> {
  const numeric = /^\d+$/.test(name);
  let text = '';
  try {
    text = await readFile('/etc/passwd', 'utf8');
  } catch {
    // no passwd: only a numeric uid can be resolved
  }
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length >= 4 && (f[0] === name || (numeric && f[2] === name))) return { uid: Number(f[2]), gid: Number(f[3]) };
  }
  return numeric ? { uid: Number(name), gid: Number(name) } : undefined;
}

/** chmod to `desired | 0777` and, as root, chown to nobody (Nomad's `dropDirPermissions`). */
export async function dropDirPermissions(p: string, desired: number): Promise<void> {
  try {
    await chmod(p, desired | 0o777);
  } catch (err) {
    throw new BerthError(`Chmod(${p}) failed: ${errorText(err)}`);
  }
  if (!isRoot()) return;
  const { uid, gid } = await nobodyIds();
  try {
    await chown(p, uid, gid);
  } catch (err) {
    throw new BerthError(`Couldn't change owner/group of ${p} to (uid: ${uid}, gid: ${gid}): ${errorText(err)}`);
  }
}

/** MkdirAll then {@link dropDirPermissions} (Nomad's `allocMkdirAll`). */
export async function allocMkdirAll(p: string, desired: number): Promise<void> {
  await mkdir(p, { recursive: true, mode: desired });
  await dropDirPermissions(p, desired);
}
