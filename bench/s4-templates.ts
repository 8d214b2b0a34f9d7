/**
 * S4, templates:
 * - render: one 1,000-line template (fields, `range`, `printf`, pipelines, and `nomadVar`
 *   reads) rendered by berth's Go text/template engine, median of R rounds, against building
 *   the same text with plain JavaScript string code; target: <= 50 ms;
 * - re-render: a variable changes → the manager's blocking read wakes, the template is
 *   rendered again and its file rewritten (atomically), median of R rounds, against writing
 *   the same file once; target: <= 50 ms.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { realClock } from '../model/clock.ts';
import type { TaskTemplate } from '../model/types.ts';
import { ServiceCatalog } from '../actors/services/catalog.ts';
import { TaskTemplateManager } from '../actors/runner/template-manager.ts';
import { consulTemplateFuncs } from '../actors/templates/consul-funcs.ts';
import { nomadFuncs } from '../actors/templates/nomad-funcs.ts';
import { render } from '../actors/templates/index.ts';
import { MemoryVariables } from '../spec/support/memory-variables.ts';
import { safeRemove, tempDir } from './lib/fsutil.ts';
import { absoluteResult, size, type BenchOptions, type BenchResult } from './lib/results.ts';
import { median, now } from './lib/stats.ts';

const PATH = 'nomad/jobs/bench/g/t';
const LINES = 1000;

/** 1,000 lines: a variable's items, ranges over a list, printf, pipelines. */
function bigTemplate(): string {
  const out: string[] = [`{{- $v := nomadVar "${PATH}" -}}`];
  for (let i = 0; i < LINES - 2; i++) {
    if (i % 4 === 0) out.push(`line ${i}: user={{ $v.user }} level={{ $v.level | toUpper }}`);
    else if (i % 4 === 1) out.push(`line ${i}: {{ range $j, $p := split "," "a,b,c" }}{{ if $j }},{{ end }}{{ $p }}{{ end }}`);
    else if (i % 4 === 2) out.push(`line ${i}: {{ printf "%05d|%-6s|%q" ${i} "x" "y" }}`);
    else out.push(`line ${i}: {{ if eq $v.level "debug" }}verbose{{ else }}quiet{{ end }} {{ len $v.user }}`);
  }
  out.push('end');
  return out.join('\n') + '\n';
}

/** The same text, built by plain string code (the floor). */
function bigPlain(items: Record<string, string>): string {
  const out: string[] = [];
  for (let i = 0; i < LINES - 2; i++) {
    if (i % 4 === 0) out.push(`line ${i}: user=${items.user} level=${items.level!.toUpperCase()}`);
    else if (i % 4 === 1) out.push(`line ${i}: a,b,c`);
    else if (i % 4 === 2) out.push(`line ${i}: ${String(i).padStart(5, '0')}|${'x'.padEnd(6)}|"y"`);
    else out.push(`line ${i}: ${items.level === 'debug' ? 'verbose' : 'quiet'} ${items.user!.length}`);
  }
  out.push('end');
  return out.join('\n') + '\n';
}

export async function run(opts: BenchOptions): Promise<BenchResult[]> {
  const rounds = size(opts, 's4-rounds', 20, 100);
  const items = { user: 'ada', level: 'debug' };
  const variable = { namespace: 'default', path: PATH, items, createIndex: 1, modifyIndex: 1, createTime: 0, modifyTime: 0 };
  const reader = { read: () => ({ fetched: true as const, value: variable }), missing: () => undefined };
  const text = bigTemplate();
  const funcs = { ...consulTemplateFuncs({ env: {}, taskDir: '/' }), ...nomadFuncs(reader, 'default') };
  const rendered = render(text, null, { name: 'bench', funcs });
  if (rendered !== bigPlain(items)) throw new Error('S4: the engine and the plain build disagree');
  const renderMs: number[] = [];
  const plainMs: number[] = [];
  for (let i = 0; i < rounds; i++) {
    let t0 = now();
    render(text, null, { name: 'bench', funcs });
    renderMs.push(now() - t0);
    t0 = now();
    bigPlain(items);
    plainMs.push(now() - t0);
  }

  // Re-render latency through the manager, on real files.
  const dir = tempDir('berth-s4-');
  const results: BenchResult[] = [];
  try {
    mkdirSync(join(dir, 't', 'local'), { recursive: true });
    const vars = new MemoryVariables();
    vars.put(PATH, items);
    const tpl: TaskTemplate = { data: text, destination: 'local/app.conf', changeMode: 'noop' };
    const m = new TaskTemplateManager(
      { name: 't', driver: 'raw_exec', config: {}, templates: [tpl] },
      {
        data: { variables: vars, catalog: new ServiceCatalog(), clock: realClock, blockQueryWaitMs: 300_000 },
        who: { namespace: 'default', jobId: 'bench', group: 'g', task: 't', allocId: 'a' },
        region: 'global',
        clock: realClock,
        eventRateMs: 3000,
        denylist: [],
        noSandbox: false,
        emit: () => undefined,
      },
    );
    const ctx = { env: {}, taskDir: { dir: join(dir, 't') }, allocDir: { dir } };
    const stop = new AbortController();
    await m.render(ctx, stop.signal);
    const rerenderMs: number[] = [];
    const writeMs: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const next = m.nextChange(stop.signal);
      await new Promise((r) => setImmediate(r)); // the watch is waiting
      const t0 = now();
      vars.put(PATH, { ...items, user: `user-${i}` });
      await next;
      rerenderMs.push(now() - t0);
      const t1 = now();
      writeFileSync(join(dir, 'plain'), rendered);
      writeMs.push(now() - t1);
    }
    stop.abort();
    if (!readFileSync(join(dir, 't', 'local', 'app.conf'), 'utf8').includes(`user=user-${rounds - 1}`)) throw new Error('S4: the last change was not rendered');
    results.push(
      absoluteResult({
        id: 'S4',
        name: `render of a ${LINES}-line template (vs plain string code)`,
        unit: 'ms',
        value: median(renderMs),
        floor: median(plainMs),
        better: 'lower',
        limit: 50,
        details: { rounds, bytes: rendered.length },
      }),
      absoluteResult({
        id: 'S4',
        name: 're-render after a variable change (vs one file write)',
        unit: 'ms',
        value: median(rerenderMs),
        floor: median(writeMs),
        better: 'lower',
        limit: 50,
        details: { rounds, max: Math.max(...rerenderMs) },
      }),
    );
  } finally {
    await safeRemove(dir);
  }
  opts.log(`S4: render ${median(renderMs).toFixed(2)} ms, re-render ${results[1]?.value.toFixed(2)} ms`);
  return results;
}
