/**
 * The house rules on imports, checked on the source itself: `machines/` imports only `model/`
 * and xstate, `bus/` only `model/` (and rxjs), `model/` nothing of berth but itself, and no
 * file reaches itself through its imports (type imports count).
 */
import { expect } from 'chai';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// Stryker's sandboxes (.stryker-tmp) are copies of the tree, made while a mutation run is on.
const SKIP = new Set(['node_modules', 'spec', '.git', 'bench', '.stryker-tmp']);

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.d.mts')) out.push(p);
  }
  return out;
}

/** Every module a file imports or re-exports from: relative ones as repo paths, others as given. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s[^'"]*?\sfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm)) {
    const spec = (m[1] ?? m[2])!;
    out.push(spec.startsWith('.') ? relative(root, resolve(dirname(file), spec)) : spec);
  }
  return out;
}

const files = sources(root).map((f) => relative(root, f));
const graph = new Map(files.map((f) => [f, importsOf(join(root, f))]));

describe('architecture: import rules', () => {
  const offenders = (dir: string, allowed: (imp: string) => boolean) =>
    files
      .filter((f) => f.startsWith(dir))
      .flatMap((f) =>
        graph
          .get(f)!
          .filter((i) => !allowed(i))
          .map((i) => `${f} -> ${i}`),
      );

  it('machines/ imports only model/, itself and xstate', () => {
    expect(offenders('machines/', (i) => i.startsWith('machines/') || i.startsWith('model/') || i === 'xstate')).to.deep.equal([]);
  });

  it('bus/ imports only model/, itself and rxjs', () => {
    expect(offenders('bus/', (i) => i.startsWith('bus/') || i.startsWith('model/') || i === 'rxjs' || i.startsWith('node:'))).to.deep.equal([]);
  });

  it('model/ imports nothing of berth but itself', () => {
    expect(offenders('model/', (i) => i.startsWith('model/') || !i.includes('/') || i.startsWith('node:'))).to.deep.equal([]);
  });

  it('actors/templates/ (the Go template library) imports nothing of berth but model/ and itself', () => {
    const ofBerth = (i: string) => i.includes('/') && !i.startsWith('node:');
    expect(offenders('actors/templates/', (i) => !ofBerth(i) || i.startsWith('actors/templates/') || i.startsWith('model/'))).to.deep.equal([]);
  });

  it('no import circles', () => {
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        circles.push([...path.slice(path.indexOf(f)), f].join(' -> '));
        return;
      }
      state.set(f, 'open');
      for (const i of graph.get(f) ?? []) if (graph.has(i)) visit(i, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of files) visit(f, []);
    expect(files.length).to.be.greaterThan(50);
    expect(circles).to.deep.equal([]);
  });

  it('agent/ imports berth only through index.ts: nothing of model/, machines/, actors/ or bus/ directly', () => {
    expect(files.filter((f) => f.startsWith('agent/')).length).to.be.greaterThan(50);
    expect(offenders('agent/', (i) => !/^(model|machines|actors|bus)\//.test(i))).to.deep.equal([]);
  });

  it('agent/scheduler/ is pure: it imports only itself and index.ts, and reads no clock, file or random source', () => {
    expect(offenders('agent/scheduler/', (i) => i.startsWith('agent/scheduler/') || i === 'index.ts')).to.deep.equal([]);
    const code = (f: string) =>
      readFileSync(join(root, f), 'utf8')
        .replace(/\/\*[^]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
    const impure = files
      .filter((f) => f.startsWith('agent/scheduler/'))
      .flatMap((f) =>
        [...code(f).matchAll(/\b(?:Date\.now|new Date|Math\.random|performance\.now|process\.|readFileSync|require)\b/g)].map((m) => `${f}: ${m[0]}`),
      );
    expect(files.filter((f) => f.startsWith('agent/scheduler/')).length).to.be.greaterThan(10);
    expect(impure).to.deep.equal([]);
  });
});

describe('architecture: errors at the HTTP edge', () => {
  it('ApiError (an HTTP status) is constructed only in agent/http/; the agent below it throws domain errors', () => {
    const builders = files.filter((f) => /\bnew ApiError\s*\(/.test(readFileSync(join(root, f), 'utf8')));
    expect(builders.length).to.be.greaterThan(5);
    expect(builders.filter((f) => !f.startsWith('agent/http/'))).to.deep.equal([]);
  });

  it('agent/core.ts and the layers under it import nothing of agent/http/', () => {
    const below = files.filter((f) => f.startsWith('agent/') && !f.startsWith('agent/http/') && f !== 'agent/agent.ts');
    const up = below.flatMap((f) =>
      graph
        .get(f)!
        .filter((i) => i.startsWith('agent/http/'))
        .map((i) => `${f} -> ${i}`),
    );
    expect(up).to.deep.equal([]);
  });
});
