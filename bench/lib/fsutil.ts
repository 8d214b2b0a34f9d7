/** Temp dirs, safe removal (never through a mount), and the floor's cheapest mount tool. @module */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mountsUnder, unmount } from '../../actors/allocdir/mounts.ts';

/** A fresh temp dir under the system temp dir (same filesystem as /usr here). */
export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(tmpdir(), `berth-bench-${prefix}-`));
}

/** Lazily unmounts everything under `dir`, deepest first, then removes it. */
export async function safeRemove(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  for (let round = 0; round < 4; round++) {
    const ms = await mountsUnder(dir);
    if (!ms.length) break;
    for (const m of ms) await unmount(m, { lazy: true }).catch(() => {});
  }
  const left = await mountsUnder(dir);
  if (left.length) throw new Error(`refusing to remove ${dir}: still mounted: ${left.slice(0, 3).join(', ')}`);
  rmSync(dir, { recursive: true, force: true });
}

const C_SOURCE = String.raw`
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#ifndef UMOUNT_NOFOLLOW
#define UMOUNT_NOFOLLOW 8
#endif
/* stdin: lines "m <dir>" (1 MB noexec tmpfs) or "u <dir>" (umount2); stdout: error count. */
int main(void) {
  char line[8192]; long errs = 0; int noswap = 1;
  while (fgets(line, sizeof line, stdin)) {
    size_t n = strlen(line); if (n && line[n-1] == '\n') line[--n] = 0;
    if (n < 3) continue;
    const char *p = line + 2; int rc;
    if (line[0] == 'm') {
      rc = mount("tmpfs", p, "tmpfs", MS_NOSUID|MS_NODEV|MS_NOEXEC, noswap ? "size=1m,noswap" : "size=1m");
      if (rc != 0 && errno == EINVAL && noswap) { noswap = 0; rc = mount("tmpfs", p, "tmpfs", MS_NOSUID|MS_NODEV|MS_NOEXEC, "size=1m"); }
    } else rc = umount2(p, UMOUNT_NOFOLLOW);
    if (rc != 0) { if (errs < 3) fprintf(stderr, "%c %s: %s\n", line[0], p, strerror(errno)); errs++; }
  }
  printf("%ld\n", errs); return 0;
}
`;

let toolPath: string | undefined | null;

/** Compiles (once) the floor's mount tool; null when no C compiler is available. */
export function mountTool(workDir: string): string | null {
  if (toolPath !== undefined) return toolPath;
  const src = path.join(workDir, 'mnt.c');
  const bin = path.join(workDir, 'mnt');
  writeFileSync(src, C_SOURCE);
  const r = spawnSync('cc', ['-O2', '-o', bin, src], { stdio: 'ignore' });
  toolPath = r.status === 0 ? bin : null;
  if (toolPath) chmodSync(toolPath, 0o755);
  return toolPath;
}

/**
 * The cheapest way found to do many mounts: one process calling mount(2)/umount2(2) in a loop,
 * no per-mount fork/exec and no per-mount IPC round trip. Falls back to one python3 process.
 */
export function batchMount(tool: string | null, ops: Array<['m' | 'u', string]>): Promise<void> {
  const input = ops.map(([o, p]) => `${o} ${p}\n`).join('');
  const [cmd, argv] = tool
    ? [tool, []]
    : [
        'python3',
        [
          '-c',
          'import ctypes,sys\nl=ctypes.CDLL(None,use_errno=True)\nfor x in sys.stdin:\n x=x.rstrip("\\n").encode();p=x[2:]\n if x[:1]==b"m":l.mount(b"tmpfs",p,b"tmpfs",14,b"size=1m")\n else:l.umount2(p,8)\nprint(0)',
        ],
      ];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv as string[], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 || out.trim() !== '0') reject(new Error(`mount tool failed (${code}, ${out.trim()} errors): ${err.trim()}`));
      else resolve();
    });
    child.stdin!.end(input);
  });
}

/** Mounts a tmpfs of `sizeMB` on `dir` (root only): fast metadata for benchmarks not about disk. */
export async function mountTmpfsDir(dir: string, sizeMB: number): Promise<void> {
  const { spawnSync: run } = await import('node:child_process');
  const r = run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMB}m,mode=0755`, 'tmpfs', dir], { stdio: 'pipe' });
  if (r.status !== 0) throw new Error(`mount tmpfs on ${dir}: ${r.stderr?.toString().trim()}`);
}
