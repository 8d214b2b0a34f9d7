#!/usr/bin/env -S node --import tsx
/**
 * The berth CLI.
 *
 *   berth demo [--inspect] [--port 8080]   the preemption demo on real processes (npm start)
 *   berth run <alloc.json> [--data-dir D]  runs one allocation (berth or Nomad API JSON) until it
 *        [--stats 5s]                      completes; Ctrl-C stops and destroys it; --stats prints
 *                                          each running task's usage on that interval
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

const HELP = `berth: run allocations with Nomad's client lifecycle

usage:
  berth demo [--inspect] [--port 8080]    preemption demo on raw_exec (what npm start runs)
  berth run <alloc.json> [--data-dir DIR] [--stats 5s]
                                          run one allocation until it completes (Ctrl-C stops it);
                                          --stats prints each task's CPU and memory on an interval
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
    options: { help: { type: 'boolean', short: 'h' }, inspect: { type: 'boolean' }, port: { type: 'string', default: '8080' }, 'data-dir': { type: 'string' }, stats: { type: 'string' } },
  });
  const [cmd, ...rest] = positionals;
  if (values.help || !cmd) {
    console.log(HELP);
    return values.help ? 0 : 2;
  }
  const port = Number(values.port);
  if (cmd === 'demo') {
    await withInspector(!!values.inspect, port, (insp) => runDemo(insp ? { inspect: insp.inspect } : {}));
    return 0;
  }
  if (cmd === 'run') {
    if (!rest[0]) throw new BerthError('berth run: give the path of an allocation JSON file');
    const alloc = parseAllocation(JSON.parse(readFileSync(rest[0], 'utf8')));
    const statsIntervalMs = values.stats ? parseGoDuration(values.stats) : 0;
    if (values.stats && !(statsIntervalMs > 0)) throw new BerthError(`berth run: --stats wants a duration such as 5s, got ${JSON.stringify(values.stats)}`);
    const dataDir = values['data-dir'] ?? mkdtempSync(join(tmpdir(), 'berth-run-'));
    return withInspector(!!values.inspect, port, async (insp) => {
      const client = createClient({ dataDir, statsIntervalMs, ...(insp ? { inspect: insp.inspect } : {}) });
      client.bus.of('task.stats').subscribe((m) => console.log(`${new Date(m.time).toISOString()} ${formatUsageLine(m.task, m.usage)}`));
      client.bus.of('task.event').subscribe((m) => console.log(`${new Date(m.time).toISOString()} ${m.task}: ${m.event.type} — ${m.event.displayMessage}`));
      client.bus.of('alloc.state').subscribe((m) => console.log(`${new Date(m.time).toISOString()} alloc ${m.from} → ${m.to}`));
      const r = client.addAlloc(alloc);
      const onSig = () => client.updateAlloc({ ...r.alloc(), desiredStatus: 'stop', allocModifyIndex: r.alloc().allocModifyIndex + 1 });
      process.once('SIGINT', onSig);
      await r.waitFor('stopping');
      process.off('SIGINT', onSig);
      const status = r.alloc().clientStatus;
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
