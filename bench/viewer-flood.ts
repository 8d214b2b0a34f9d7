/**
 * Host RSS with a flooding task and a log-tail page that stopped reading: `npx tsx
 * bench/viewer-flood.ts [seconds]`. The task's output is an in-memory generator (as fast as the
 * tail pulls); the page opens /api/logs and never reads. Prints RSS before and after.
 */
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBus } from '../bus/bus.ts';
import { ViewerFeed } from '../actors/viewer/feed.ts';

const seconds = Number(process.argv[2] ?? 10);
const modPath = process.argv[3] ?? '../actors/viewer/server.ts';
const { startViewerServer } = (await import(modPath)) as typeof import('../actors/viewer/server.ts');
const logsDir = mkdtempSync(join(tmpdir(), 'berth-flood-'));
const chunk = Buffer.alloc(64 * 1024, 'x');
let pulled = 0;
const bus = createBus();
const feed = new ViewerFeed({ bus, now: Date.now });
const srv = await startViewerServer({
  mode: 'live',
  feed,
  logSource: () => ({
    logsDir,
    tasks: ['web'],
    async *logs(_t, _s, o) {
      while (!o.signal?.aborted) {
        pulled += chunk.length;
        yield chunk;
        await new Promise((r) => setImmediate(r));
      }
    },
  }),
});
const mb = (n: number) => Math.round(n / 1024 / 1024);
const before = process.memoryUsage().rss;
const req = request(`${srv.url}api/logs?alloc=a&task=web`, { agent: false }, (res) => res.pause());
req.end();
await new Promise((r) => setTimeout(r, seconds * 1000));
const after = process.memoryUsage().rss;
console.log(JSON.stringify({ seconds, rssBeforeMB: mb(before), rssAfterMB: mb(after), pulledMB: mb(pulled) }));
req.destroy();
await srv.close();
feed.close();
bus.close();
rmSync(logsDir, { recursive: true, force: true });
