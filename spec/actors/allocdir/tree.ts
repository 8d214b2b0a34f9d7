/** A byte-for-byte fingerprint of a directory tree, for "unchanged" assertions. */
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';

/** One line per entry under `dir` (never following links): path, type, mode, owner, content or target. */
export async function fingerprint(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  const st = await lstat(path.join(dir, rel));
  const head = `${rel || '.'} ${(st.mode & 0o7777).toString(8)} ${st.uid}:${st.gid}`;
  if (st.isSymbolicLink()) return [`${head} -> ${await readlink(path.join(dir, rel))}`];
  if (st.isFile()) return [`${head} = ${(await readFile(path.join(dir, rel))).toString('base64')}`];
  if (!st.isDirectory()) return [`${head} special`];
  out.push(`${head} /`);
  for (const name of (await readdir(path.join(dir, rel))).sort()) out.push(...(await fingerprint(dir, rel ? `${rel}/${name}` : name)));
  return out;
}
