/**
 * #10 finding 2, end to end: a setuid-root binary in the shared alloc dir (as a migration once
 * delivered it) runs with its caller's uid inside an exec task, because the alloc dir's bind
 * mount into the chroot is nosuid.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { chmod, chown, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';
import type { AllocRunner } from '../../../actors/client/types.ts';

async function readAll(r: AllocRunner, task: string): Promise<string> {
  let text = '';
  for await (const chunk of r.logs(task, 'stdout')) text += chunk.toString();
  return text;
}

/** Just what /usr/bin/id needs: itself and the libraries ldd lists. */
function idChroot(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of execFileSync('ldd', ['/usr/bin/id'], { encoding: 'utf8' }).matchAll(/(\/\S+)/g)) env[m[1]!] = m[1]!;
  return env;
}

describe('exec task: a setuid-root file in alloc/ does not give root (#10)', function () {
  this.timeout(60_000);
  const newClient = useTempClients();

  before(function () {
    if (process.geteuid?.() !== 0) {
      this.currentTest && (this.currentTest.title += ' (skipped: needs root for chroot, mounts, setuid)');
      this.skip();
    }
  });

  it('runs /alloc/data/id (setuid root, 04755) as nobody and gets euid 65534', async () => {
    const client = newClient({
      chrootEnv: idChroot(),
      hooks: [
        {
          name: 'plant-setuid',
          async prerun({ allocDir }) {
            const p = join(allocDir.dataDir, 'id');
            await copyFile('/usr/bin/id', p);
            await chown(p, 0, 0);
            await chmod(p, 0o4755);
          },
        },
      ],
    });
    const r = client.addAlloc(makeAlloc([{ name: 'web', driver: 'exec', config: { command: '/alloc/data/id', args: ['-u'] } }], { jobType: 'batch' }));
    await viewWhere(client, r, (a) => a.clientStatus === 'complete' || a.clientStatus === 'failed');
    expect(r.alloc().clientStatus, JSON.stringify(r.alloc().taskStates!.web!.events.map((e) => e.displayMessage))).to.equal('complete');
    expect((await readAll(r, 'web')).trim()).to.equal('65534');
  });
});
