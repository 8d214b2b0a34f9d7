import { expect } from 'chai';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeAlloc } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';
import type { AllocRunner } from '../../../actors/client/types.ts';

async function readAll(r: AllocRunner, task: string): Promise<string> {
  let text = '';
  for await (const chunk of r.logs(task, 'stdout')) text += chunk.toString();
  return text;
}

describe('client: exec in a chroot built from the default chroot_env', function () {
  this.timeout(60_000);
  const newClient = useTempClients();
  const secret = join(tmpdir(), `berth-host-secret-${process.pid}`);
  after(() => rmSync(secret, { recursive: true, force: true }));

  before(function () {
    if (process.geteuid?.() !== 0) this.skip(); // needs root: chroot, mounts, setuid to nobody
  });

  it('runs a binary from the embedded chroot as nobody, sees neither host dirs nor the client alloc dir', async () => {
    mkdirSync(secret, { recursive: true });
    writeFileSync(join(secret, 'marker'), 'host only');
    const client = newClient();
    const built = record(client, 'chroot.built');
    const script = `id -u; ls /; test -e ${secret}/marker && echo SEES-HOST || echo no-host; test -e ${client.dataDir}/alloc && echo SEES-ALLOC-DIR || echo no-alloc-dir; echo "task dir $NOMAD_TASK_DIR"`;
    const r = client.addAlloc(makeAlloc([{ name: 'web', driver: 'exec', config: { command: '/bin/sh', args: ['-c', script] } }], { jobType: 'batch' }));
    await viewWhere(client, r, (a) => a.clientStatus === 'complete' || a.clientStatus === 'failed');
    expect(r.alloc().clientStatus, JSON.stringify(r.alloc().taskStates!.web!.events.map((e) => e.displayMessage))).to.equal('complete');
    const out = await readAll(r, 'web');
    const lines = out.split('\n');
    expect(lines[0]).to.equal('65534');
    expect(out).to.include('no-host');
    expect(out).to.include('no-alloc-dir');
    expect(out).to.include('task dir /local');
    expect(out).to.match(/\busr\b/);
    // the chroot really is on disk, built from the host, with its stats reported
    expect(existsSync(join(r.allocDir.dir, 'web', 'usr', 'bin'))).to.equal(true);
    expect(built.items).to.have.length(1);
    expect(built.items[0]!.files).to.be.greaterThan(100);
    const events = r.alloc().taskStates!.web!.events;
    expect(events.some((e) => e.type === 'Task Setup' && /^Built chroot: \d+ files/.test(e.displayMessage))).to.equal(true);
    expect(events.some((e) => e.type === 'Driver' && /isolated: chroot/.test(e.displayMessage))).to.equal(true);
  });
});
