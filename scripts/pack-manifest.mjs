#!/usr/bin/env node
// `npm pack` / `npm publish` hooks: the tarball's package.json carries no `prepare` (nor these
// hooks). `prepare` builds dist/ for a checkout's `npm ci`; in a published package it would make
// every install of berth run a build script (npm warns of install scripts) for a dist/ that the
// tarball already holds. npm reads package.json again after `prepack`, so `strip` (prepack) writes
// the manifest to pack and keeps the checkout's own beside it; `restore` (postpack) puts it back.
// A pack that failed between the two leaves the copy: the next `strip` restores it first.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const kept = join(root, '.package.json.checkout');
/** Scripts that only make sense in a checkout. */
const CHECKOUT_ONLY = ['prepare', 'prepack', 'postpack'];

const mode = process.argv[2];
if (mode === 'strip') {
  if (existsSync(kept)) renameSync(kept, manifest);
  const text = readFileSync(manifest, 'utf8');
  const pkg = JSON.parse(text);
  for (const s of CHECKOUT_ONLY) delete pkg.scripts?.[s];
  writeFileSync(kept, text);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (mode === 'restore') {
  if (existsSync(kept)) renameSync(kept, manifest);
} else {
  console.error('usage: pack-manifest.mjs strip|restore');
  process.exit(2);
}
