#!/usr/bin/env node
// `npm run build`: compiles the TypeScript sources into dist/ (ESM JavaScript, .d.ts and source
// maps), then copies the plain-JavaScript programs tsc does not emit: the per-task executor and
// the log rotator it imports (found at runtime next to the compiled driver code).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
/** Files tsc does not emit, relative to the repo root and to dist/ alike. */
const ASSETS = ['actors/drivers/executor/executor.mjs', 'actors/drivers/logs/rotator.mjs', 'actors/drivers/logs/rotator.d.mts'];

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) {
  console.error(`build: tsc failed (exit ${r.status ?? r.signal})`);
  process.exit(1);
}
for (const rel of ASSETS) {
  mkdirSync(dirname(join(dist, rel)), { recursive: true });
  copyFileSync(join(root, rel), join(dist, rel));
}
chmodSync(join(dist, 'bin/berth.js'), 0o755);
