#!/usr/bin/env node
// `npm run build`: compiles the TypeScript sources into dist/ (ESM JavaScript, .d.ts and source
// maps), then copies every other file of the source dirs to the same place under dist/: what tsc
// does not emit but is found at runtime next to the compiled code (the task supervisor and shim, the
// log rotator, cgroup helpers, the viewer's static page) and their .d.mts.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
/** The dirs tsc compiles (tsconfig.build.json's include). */
const SOURCE_DIRS = ['actors', 'model', 'machines', 'bus', 'bin', 'agent'];

/** Every file under `dir` (relative to the repo root) that tsc does not emit: not a .ts file. */
function assets(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = join(dir, e.name);
    if (e.isDirectory()) return assets(rel);
    return e.name.endsWith('.ts') ? [] : [rel];
  });
}

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) {
  console.error(`build: tsc failed (exit ${r.status ?? r.signal})`);
  process.exit(1);
}
for (const rel of SOURCE_DIRS.flatMap(assets)) {
  mkdirSync(dirname(join(dist, rel)), { recursive: true });
  copyFileSync(join(root, rel), join(dist, rel));
}
chmodSync(join(dist, 'bin/berth.js'), 0o755);
