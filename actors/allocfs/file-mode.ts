/**
 * File modes rendered as Go's `os.FileMode.String()`, which is what Nomad's alloc fs API reports
 * (`-rw-r--r--`, `drwxrwxrwx`, `dtrwxrwxrwx` for a sticky dir, `Lrwxrwxrwx` for a symlink).
 * @module
 */
import type { Stats } from 'node:fs';

/**
 * Go's `FileMode.String()` for a Node `Stats`: type and special-bit letters in Go's order
 * (`d`, `L`, `D`, `p`, `S`, `u`, `g`, `c`, `t`), or `-` when none, then the nine `rwx` bits.
 * @example goFileMode(statSync('/tmp')) // 'dtrwxrwxrwx'
 */
export function goFileMode(st: Stats): string {
  let out = '';
  if (st.isDirectory()) out += 'd';
  if (st.isSymbolicLink()) out += 'L';
  if (st.isBlockDevice() || st.isCharacterDevice()) out += 'D';
  if (st.isFIFO()) out += 'p';
  if (st.isSocket()) out += 'S';
  if (st.mode & 0o4000) out += 'u';
  if (st.mode & 0o2000) out += 'g';
  if (st.isCharacterDevice()) out += 'c';
  if (st.mode & 0o1000) out += 't';
  if (out === '') out = '-';
  const rwx = 'rwxrwxrwx';
  for (let i = 0; i < 9; i++) out += st.mode & (1 << (8 - i)) ? rwx[i] : '-';
  return out;
}
