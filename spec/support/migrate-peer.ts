/**
 * The "other node" of the remote migration specs, run as its own process:
 *
 *   node --import tsx spec/support/migrate-peer.ts '{"token":"s3cret","bigMB":0}'
 *
 * It starts a client (node id `node-a`) with two `migrate: true` allocs on mock_driver:
 * - `ok`: its data dir holds {@link PEER_FILES} (nested dirs, a symlink, explicit modes) and
 *   `web/local/conf.txt`, plus `big.bin` of `bigMB` MiB when asked;
 * - `broken`: its `web/local` is removed, so its snapshot ends with `NOMAD-<id>-ERROR.log`.
 * Then it serves snapshots on 127.0.0.1 (free port, with the token), stops both allocs (client
 * status complete), and prints one JSON line: `{ url, ok, broken }` (the allocs' client views).
 * On SIGTERM, SIGINT or stdin closing (keep it open: a pipe) it destroys its allocs, shuts down, removes its temp dir
 * and exits 0.
 * @module
 */
import { chmod, mkdir, open, rm, symlink, writeFile } from 'node:fs/promises';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createClient } from '../../actors/client/client.ts';
import type { AllocRunner } from '../../actors/client/types.ts';
import { mountsUnder, unmount } from '../../actors/allocdir/mounts.ts';
import type { Allocation } from '../../model/types.ts';
import { makeAlloc, mockTask } from './fixtures.ts';
import { viewWhere } from './temp-client.ts';

/** What the `ok` alloc's `alloc/data` holds: relative path -> content and mode, or a link/dir. */
export const PEER_FILES: Record<string, { content: string; mode: number } | { link: string } | { dir: number }> = {
  'hello.txt': { content: 'hello from node-a\n', mode: 0o640 },
  nested: { dir: 0o750 },
  'nested/deeper': { dir: 0o700 },
  'nested/deeper/blob.bin': { content: 'berth'.repeat(50_000), mode: 0o600 },
  'nested/link': { link: 'deeper/blob.bin' },
  'exec.sh': { content: '#!/bin/sh\necho hi\n', mode: 0o755 },
};
/** The `ok` alloc's `web/local/conf.txt`. */
export const PEER_LOCAL = { content: 'listen = 8080\n', mode: 0o604 };

/** A `migrate: true` alloc of task `web` on node-a. */
export function peerAlloc(over: Partial<Allocation> = {}): Allocation {
  return makeAlloc([mockTask('web', { run_for: '60s' })], { nodeId: 'node-a', group: { ephemeralDisk: { migrate: true, sizeMB: 300 } }, ...over });
}

async function populate(r: AllocRunner, bigMB: number): Promise<void> {
  const data = r.allocDir.dataDir;
  for (const [rel, spec] of Object.entries(PEER_FILES)) {
    const p = path.join(data, rel);
    if ('dir' in spec) {
      await mkdir(p, { recursive: true });
      await chmod(p, spec.dir);
    } else if ('link' in spec) {
      await symlink(spec.link, p);
    } else {
      await writeFile(p, spec.content);
      await chmod(p, spec.mode);
    }
  }
  const conf = path.join(r.allocDir.dir, 'web', 'local', 'conf.txt');
  await writeFile(conf, PEER_LOCAL.content);
  await chmod(conf, PEER_LOCAL.mode);
  if (bigMB > 0) {
    const fh = await open(path.join(data, 'big.bin'), 'w');
    const chunk = Buffer.alloc(1 << 20);
    for (let i = 0; i < bigMB; i++) {
      chunk.fill(i & 0xff);
      await fh.write(chunk);
    }
    await fh.close();
  }
}

let cleanup: (code: number) => Promise<void> = async (code) => process.exit(code);

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '{}') as { token?: string; bigMB?: number };
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-peer-'));
  const client = createClient({ dataDir: dir, nodeId: 'node-a' });
  let cleaning: Promise<void> | undefined;
  cleanup = (code) =>
    (cleaning ??= (async () => {
      await Promise.allSettled(client.runners().map((r) => r.destroy()));
      await client.shutdown();
      for (const m of await mountsUnder(dir)) await unmount(m, { lazy: true }).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    })().finally(() => process.exit(code)));
  process.once('SIGTERM', () => cleanup(0));
  process.once('SIGINT', () => cleanup(0));
  // The parent holds our stdin open: when it goes away (even killed), so do we.
  process.stdin.on('end', () => cleanup(0));
  process.stdin.on('close', () => cleanup(0));
  process.stdin.resume();

  const ok = client.addAlloc(peerAlloc());
  const broken = client.addAlloc(peerAlloc());
  await Promise.all([ok.waitFor('running'), broken.waitFor('running')]);
  await populate(ok, args.bigMB ?? 0);
  await rm(path.join(broken.allocDir.dir, 'web', 'local'), { recursive: true, force: true });
  const srv = await client.serveSnapshots({ host: '127.0.0.1', port: 0, ...(args.token ? { token: args.token } : {}) });
  for (const r of [ok, broken]) {
    const a = r.alloc();
    client.updateAlloc({ ...a, desiredStatus: 'stop', allocModifyIndex: a.allocModifyIndex + 1 });
  }
  await Promise.all([ok, broken].map((r) => viewWhere(client, r, (a) => a.clientStatus === 'complete')));
  process.stdout.write(`${JSON.stringify({ url: srv.url, ok: ok.alloc(), broken: broken.alloc() })}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((err) => {
    process.stderr.write(`migrate-peer: ${(err as Error).stack ?? String(err)}\n`);
    void cleanup(1);
  });
}
