/**
 * Property: whatever archive a peer sends (entries, links, orders, modes, owners), restoreSnapshot
 * keeps the guarantees checked by {@link checkArchive}. Shrunk counterexamples live in
 * regressions.spec.ts.
 */
import fc from 'fast-check';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkArchive, type Entry, type Kind } from './restore-check.ts';
import { propertyRuns, propertyTimeout } from './settings.ts';
import { rootOnly } from '../support/skips.ts';

// Names from a small alphabet, so that paths collide, nest under links and climb with `..`.
const component = fc.constantFrom('alloc', 'data', 'web', 'local', 'a', 'b', '.', '..', 'logs', 'x'.repeat(120));
const relPath = fc.array(component, { minLength: 1, maxLength: 6 }).map((c) => c.join('/'));
const rooted = fc
  .tuple(fc.constantFrom('alloc/data', 'web/local', 'alloc/data', 'api/local'), fc.array(component, { maxLength: 4 }))
  .map(([r, c]) => [r, ...c].join('/'));
const entryPath = fc.oneof(
  { weight: 4, arbitrary: rooted },
  { weight: 1, arbitrary: relPath },
  { weight: 1, arbitrary: fc.constantFrom('/etc/x', '../x', 'alloc', 'alloc/logs', 'NOMAD-p-ERROR.log') },
);
const target = fc.oneof(
  fc.array(fc.oneof(component, fc.constant('outside')), { minLength: 1, maxLength: 8 }).map((c) => c.join('/')),
  fc.constantFrom('.', '..', '/etc', '/tmp', 'a/../../../..', ''),
  // Chains through other links: b/b/.../../../outside (lexically inside, not once b -> .)
  fc
    .tuple(fc.constantFrom('a', 'b'), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 6 }))
    .map(([l, k, m]) => `${`${l}/`.repeat(k)}${'../'.repeat(m)}outside`),
);
const entry: fc.Arbitrary<Entry> = fc
  .record({
    path: entryPath,
    type: fc.constantFrom<Kind>('File', 'File', 'Directory', 'SymbolicLink', 'SymbolicLink', 'Link', 'FIFO'),
    mode: fc.integer({ min: 0, max: 0o7777 }),
    uid: fc.constantFrom(0, 1000, 65534),
    linkpath: target,
    body: fc.string({ maxLength: 20 }),
  })
  .map((e) => (e.type === 'SymbolicLink' || e.type === 'Link' ? e : { ...e, linkpath: undefined }) as Entry);

/** A "dot" link and a link climbing through it, under one of the roots, among other entries. */
const chain: fc.Arbitrary<Entry[]> = fc
  .tuple(fc.constantFrom('alloc/data', 'web/local', 'alloc/data/a'), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 2, max: 6 }), fc.boolean())
  .map(([dir, k, m, dotFirst]) => {
    const dot: Entry = { path: `${dir}/b`, type: 'SymbolicLink', mode: 0o777, uid: 0, linkpath: '.' };
    const climb: Entry = { path: `${dir}/up`, type: 'SymbolicLink', mode: 0o777, uid: 0, linkpath: `${'b/'.repeat(k)}${'../'.repeat(m)}outside/victim` };
    return dotFirst ? [dot, climb] : [climb, dot];
  });
const archiveEntries = fc.oneof(
  { weight: 3, arbitrary: fc.array(entry, { minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.tuple(fc.array(entry, { maxLength: 6 }), chain, fc.array(entry, { maxLength: 6 })).map(([a, c, b]) => [...a, ...c, ...b]) },
);

describe('property: restoreSnapshot of random archives (#10)', function () {
  this.timeout(propertyTimeout(60_000));
  let root: string;
  let outside: string;
  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'berth-prop-restore-'));
    outside = path.join(root, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'victim'), 'original');
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('never escapes, never keeps privileges, and fails without a trace', async () => {
    await fc.assert(
      fc.asyncProperty(archiveEntries, (entries) => checkArchive(root, outside, entries)),
      propertyRuns(50),
    );
  });

  it('never leaves a restored entry owned by root (root)', async function () {
    rootOnly(this, 'to restore as root and chown the pre-populated files');
    await fc.assert(
      fc.asyncProperty(archiveEntries, (entries) => checkArchive(root, outside, entries, { owners: true })),
      propertyRuns(25),
    );
  });
});
