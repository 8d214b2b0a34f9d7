/**
 * Without a writable hierarchy (berth not root), tasks run without cgroups and say so: on the bus
 * at client start and in each task's Driver event. As root the spec runs a client as `nobody`.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { detectCgroups } from '../../../actors/cgroups/detect.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');
const NOBODY = 65534;

describe('cgroups: fallback when no hierarchy is writable', function () {
  this.timeout(30_000);

  it('detection gives the reason instead of failing', function () {
    if (process.geteuid?.() === 0) return this.skip(); // root can write cgroupfs; see the next test
    const d = detectCgroups();
    expect(d.ok).to.equal(false);
    if (!d.ok) expect(d.reason).to.match(/not root|no cgroup/);
  });

  it('a client run as nobody runs its task without a cgroup and says why', async function () {
    if (process.geteuid?.() !== 0) return this.skip(); // needs root to become nobody
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-nobody-'));
    fs.chownSync(dataDir, NOBODY, NOBODY);
    try {
      // nobody must reach the checkout (tsx, the sources, the executor) and the temp dir; a
      // checkout under a private dir (mode 0700) cannot be run as nobody at all.
      const probe = `for (const p of ${JSON.stringify([path.join(repo, 'node_modules', 'tsx', 'package.json'), path.join(here, 'support', 'nobody-client.ts'), dataDir])}) require('fs').accessSync(p, require('fs').constants.R_OK)`;
      const reach = await promisify(execFile)(process.execPath, ['-e', probe], { cwd: '/', uid: NOBODY, gid: NOBODY }).then(
        () => undefined,
        (e: Error) => e.message.split('\n').find((l) => l.includes('EACCES')) ?? e.message,
      );
      if (reach) {
        console.log(`      - skipped: user nobody cannot read the checkout or the temp dir (${reach.trim()})`);
        return this.skip();
      }
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(here, 'support', 'nobody-client.ts'), dataDir], {
        cwd: repo,
        uid: NOBODY,
        gid: NOBODY,
        env: { ...process.env, HOME: dataDir },
      });
      const out = JSON.parse(stdout.trim().split('\n').pop()!) as {
        detected: { version: null; message: string; detail?: string };
        driver: string;
        status: string;
      };
      expect(out.status).to.equal('complete');
      expect(out.detected.version).to.equal(null);
      // One short reason where people read it; the EACCES list only for whoever asks.
      expect(out.detected.message).to.equal('no cgroups: not root');
      expect(out.detected.detail).to.match(/EACCES/);
      expect(out.driver).to.equal('resources: no cgroup: not root; no limits, kills by process group only');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
