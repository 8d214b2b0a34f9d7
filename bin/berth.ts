#!/usr/bin/env -S node --import tsx
/**
 * The berth CLI.
 *
 *   berth demo [--inspect] [--port 8080]   the preemption demo on real processes (npm start)
 *   berth run <alloc.json> [--data-dir D]  runs one allocation (berth or Nomad API JSON) until it
 *        [--stats 5s]                      completes; Ctrl-C stops and destroys it; --stats prints
 *                                          each running task's usage on that interval
 *   --view / --record FILE / berth view FILE  berth's own viewer (actors/viewer), live or replayed
 * @module
 */
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createInspectorServer } from '@statelyai/inspect/server';
import { createClient } from '../actors/client/client.ts';
import { connectInspector, type WsInspector } from '../actors/inspect/ws-inspector.ts';
import { BerthError } from '../model/errors.ts';
import { parseGoDuration } from '../model/duration.ts';
import { formatUsageLine } from '../actors/cgroups/format-usage.ts';
import { parseAllocation } from '../model/parse.ts';
import { runDemo } from './demo.ts';
import { openLiveViewer, serveRecording, untilInterrupted, viewerPageUrl } from '../actors/viewer/index.ts';

const HELP = `berth: run allocations with Nomad's client lifecycle

usage:
  berth demo [--inspect] [--port 8080]    preemption demo on raw_exec (what npm start runs)
  berth run <alloc.json> [--data-dir DIR] [--stats 5s]
                                          run one allocation until it completes (Ctrl-C stops it);
                                          --stats prints each task's CPU and memory on an interval
  berth view <recording.jsonl>            replay a recording in berth's viewer (time slider)

viewer flags (berth's own page, works with no internet):
  --view                  demo/run: serve the live viewer (port --view-port, default 8081)
  --record FILE           run: record every inspection event to FILE (JSON lines) for 'berth view'
  --view-host H           default 127.0.0.1
  --view-port N           default 8081
  --token T               the viewer then needs ?token=T
  berth --help`;

async function withInspector<T>(enabled: boolean, port: number, fn: (insp?: WsInspector) => Promise<T>): Promise<T> {
  if (!enabled) return fn();
  const server = createInspectorServer({ port, autoOpen: false });
  console.log(`inspector: open http://localhost:${port} in a browser (it loads the Stately inspector)`);
  const insp = connectInspector({ url: `ws://127.0.0.1:${port}` });
  try {
    return await fn(insp);
  } finally {
    await insp.stop();
    server.stop();
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      inspect: { type: 'boolean' },
      port: { type: 'string', default: '8080' },
      'data-dir': { type: 'string' },
      view: { type: 'boolean' },
      record: { type: 'string' },
      'view-host': { type: 'string', default: '127.0.0.1' },
      'view-port': { type: 'string', default: '8081' },
      token: { type: 'string' },
      stats: { type: 'string' },
    },
  });
  const [cmd, ...rest] = positionals;
  if (values.help || !cmd) {
    console.log(HELP);
    return values.help ? 0 : 2;
  }
  const port = Number(values.port);
  const viewOpts = { host: values['view-host'], port: Number(values['view-port']), ...(values.token ? { token: values.token } : {}), log: (l: string) => console.log(l) };
  if (cmd === 'view') {
    if (!rest[0]) throw new BerthError('berth view: give the path of a recording (berth run --record FILE)');
    const srv = await serveRecording(rest[0], viewOpts);
    console.log(`viewer: replaying ${rest[0]}: open ${viewerPageUrl(srv, values.token)} (Ctrl-C to stop)`);
    await untilInterrupted();
    await srv.close();
    return 0;
  }
  if (cmd === 'demo') {
    await withInspector(!!values.inspect, port, (insp) =>
      runDemo({
        ...(insp ? { inspect: insp.inspect } : {}),
        ...(values.record ? { record: values.record } : {}),
        ...(values.view
          ? {
              onClient: async (client) => {
                const srv = await openLiveViewer(client, viewOpts);
                console.log('viewer: waiting up to 60 s for a page to connect…');
                await Promise.race([srv.pageConnected(), new Promise((r) => setTimeout(r, 60_000).unref())]);
              },
              hold: async () => {
                console.log('viewer: everything is running; press Ctrl-C to stop the allocations and exit');
                await untilInterrupted();
              },
            }
          : {}),
      }),
    );
    return 0;
  }
  if (cmd === 'run') {
    if (!rest[0]) throw new BerthError('berth run: give the path of an allocation JSON file');
    const alloc = parseAllocation(JSON.parse(readFileSync(rest[0], 'utf8')));
    const statsIntervalMs = values.stats ? parseGoDuration(values.stats) : 0;
    if (values.stats && !(statsIntervalMs > 0)) throw new BerthError(`berth run: --stats wants a duration such as 5s, got ${JSON.stringify(values.stats)}`);
    const dataDir = values['data-dir'] ?? mkdtempSync(join(tmpdir(), 'berth-run-'));
    return withInspector(!!values.inspect, port, async (insp) => {
      const client = createClient({ dataDir, statsIntervalMs, ...(insp ? { inspect: insp.inspect } : {}), ...(values.record ? { record: values.record } : {}) });
      client.bus.of('task.stats').subscribe((m) => console.log(`${new Date(m.time).toISOString()} ${formatUsageLine(m.task, m.usage)}`));
      if (values.view) await openLiveViewer(client, viewOpts);
      client.bus.of('task.event').subscribe((m) => console.log(`${new Date(m.time).toISOString()} ${m.task}: ${m.event.type} — ${m.event.displayMessage}`));
      client.bus.of('alloc.state').subscribe((m) => console.log(`${new Date(m.time).toISOString()} alloc ${m.from} → ${m.to}`));
      const r = client.addAlloc(alloc);
      const onSig = () => client.updateAlloc({ ...r.alloc(), desiredStatus: 'stop', allocModifyIndex: r.alloc().allocModifyIndex + 1 });
      process.once('SIGINT', onSig);
      await r.waitFor('stopping');
      process.off('SIGINT', onSig);
      const status = r.alloc().clientStatus;
      if (values.view) {
        console.log(`allocation ${alloc.id}: ${status}; viewer still open, Ctrl-C to exit`);
        await untilInterrupted();
      }
      await r.destroy();
      await client.shutdown();
      if (!values['data-dir']) rmSync(dataDir, { recursive: true, force: true });
      console.log(`allocation ${alloc.id}: ${status}`);
      return status === 'failed' ? 1 : 0;
    });
  }
  console.error(`unknown command ${JSON.stringify(cmd)}\n\n${HELP}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof BerthError ? `berth: ${err.message}` : err);
    process.exit(1);
  },
);
