/**
 * A chroot build says how far it got: `chroot.progress` on the bus while an `exec` task's chroot
 * is built, a bar redrawn in place on a terminal, a line every two seconds otherwise.
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import type { BusMessage } from '../../bus/messages.ts';
import { RunPrinter } from '../../bin/cli/run/printer.ts';
import { makeAlloc } from '../support/fixtures.ts';
import { useTempClients } from '../support/temp-client.ts';

/** A printer writing into a string, its stdout a terminal or not. */
function printer(tty: boolean) {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  Object.assign(out, { isTTY: tty });
  const err = new PassThrough();
  err.resume();
  const p = new RunPrinter({ stdout: out, stderr: err, stdin: new PassThrough(), color: false }, 'text', ['web']);
  return { p, text: () => text };
}

const progress = (time: number, files: number, total?: number): BusMessage =>
  ({ type: 'chroot.progress', time, allocId: 'a', task: 'web', files, dirs: 10, bytes: 0, ms: time, done: files, ...(total ? { total } : {}) }) as BusMessage;

describe('chroot build progress', function () {
  this.timeout(120_000);
  const newClient = useTempClients();

  it('on a terminal: one line redrawn in place, a bar once the total is known, cleared before the next line', () => {
    const { p, text } = printer(true);
    p.event(progress(200, 1_000));
    p.event(progress(400, 50_000, 100_000));
    p.event(progress(600, 75_000, 100_000));
    p.output('web', 'stdout', 'hello');
    const out = text();
    expect(out).to.include('\r\x1b[2Kweb: building chroot 1,000 files, 10 dirs, 0.2 s');
    expect(out).to.include('\r\x1b[2Kweb: building chroot [############------------]  50 % 50,000 files');
    expect(out).to.include('[##################------]  75 % 75,000 files');
    expect(out.endsWith('\r\x1b[2Kweb | hello\n')).to.equal(true);
    expect(out.split('\n')).to.have.length(2); // the progress never took a line of its own
  });

  it('not on a terminal: a line at most every two seconds, with the percentage once known', () => {
    const { p, text } = printer(false);
    for (let t = 0; t <= 5000; t += 200) p.event(progress(t, t * 10, t >= 2000 ? 60_000 : undefined));
    const lines = text().trim().split('\n');
    expect(lines).to.have.length(3); // at 0, 2000 and 4000 ms
    expect(lines[0]).to.match(/web: building chroot: 0 files, 10 dirs, 0\.0 s$/);
    expect(lines[1]).to.match(/web: building chroot: 20,000 files, 10 dirs, 2\.0 s \(33 %\)$/);
    expect(lines[2]).to.match(/\(66 %\)$/);
  });

  it("an exec task's first chroot build publishes chroot.progress with files, bytes and a total, then chroot.built", async function () {
    if (process.getuid?.() !== 0) {
      console.log('      - skipped: exec needs root');
      return this.skip();
    }
    const client = newClient();
    const seen: Array<BusMessage<'chroot.progress'>> = [];
    client.bus.of('chroot.progress').subscribe((m) => seen.push(m));
    const built = new Promise<BusMessage<'chroot.built'>>((resolve) => client.bus.of('chroot.built').subscribe(resolve));
    const r = client.addAlloc(makeAlloc([{ name: 'web', driver: 'exec', config: { command: '/bin/true' } }], { jobType: 'batch' }));
    const done = await built;
    await r.waitFor('stopping');
    expect(seen.length, 'progress messages during the build').to.be.greaterThan(0);
    const last = seen[seen.length - 1]!;
    expect(last).to.include({ task: 'web', allocId: r.allocId });
    expect(last.files).to.be.greaterThan(0).and.at.most(done.files);
    expect(last.bytes).to.be.at.most(done.bytes);
    expect(seen.some((m) => m.total !== undefined && m.total >= m.done)).to.equal(true);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.files).to.be.at.least(seen[i - 1]!.files);
    console.log(`      ${seen.length} progress messages over ${Math.round(done.ms)} ms; last: ${last.done} of ${last.total ?? '?'} entries`);
  });
});
