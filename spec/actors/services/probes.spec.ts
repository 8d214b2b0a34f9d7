/**
 * Script and tcp checks (`actors/services/probes.ts`): a script's exit code is its status, its
 * output stdout then stderr, bounded; a tcp check passes on a connection. The task's exec is
 * faked here (it is the driver's boundary; `spec/actors/services/group-services.spec.ts` runs a
 * script check inside a real task).
 */
import { expect } from 'chai';
import net from 'node:net';
import { MAX_CHECK_OUTPUT, probeScript, probeTcp, type TaskExec } from '../../../actors/services/probes.ts';
import { TimeoutError } from '../../../model/errors.ts';
import type { ServiceCheck } from '../../../model/types.ts';

describe('checks: script and tcp probes', () => {
  const check = (over: Partial<ServiceCheck>): ServiceCheck => ({ type: 'script', command: '/bin/check', intervalMs: 10_000, timeoutMs: 500, ...over });
  const signal = () => new AbortController().signal;

  it('script: exit 0 passes, 1 warns, anything else is critical; the output is stdout then stderr, at most 4 KiB', async () => {
    const asked: string[][] = [];
    const exitWith =
      (exitCode: number, stdout = 'out', stderr = 'err'): TaskExec =>
      async (_task, argv) => (asked.push(argv), { exitCode, stdout: Buffer.from(stdout), stderr: Buffer.from(stderr) });
    expect(await probeScript(check({ args: ['-v'] }), 'web', exitWith(0), signal())).to.deep.equal({ status: 'passing', output: 'outerr' });
    expect(asked[0]).to.deep.equal(['/bin/check', '-v']);
    expect((await probeScript(check({}), 'web', exitWith(1), signal())).status).to.equal('warning');
    expect((await probeScript(check({}), 'web', exitWith(2), signal())).status).to.equal('critical');
    const big = await probeScript(check({}), 'web', exitWith(0, 'o'.repeat(3000), 'e'.repeat(3000)), signal());
    expect(big.output).to.equal('o'.repeat(3000) + 'e'.repeat(MAX_CHECK_OUTPUT - 3000));
  });

  it('script: a command that times out is critical, saying so', async () => {
    // What the driver's exec rejects with at its timeout (actors/drivers/exec-process.ts).
    const slow: TaskExec = async () => {
      throw new TimeoutError('exec: check timed out after 500 ms');
    };
    expect(await probeScript(check({}), 'web', slow, signal())).to.deep.equal({ status: 'critical', output: 'Timed out (500 ms) running check' });
  });

  it('tcp: a connection passes ("TCP connect <addr>: Success"); a port nobody listens on is critical', async () => {
    const server = net.createServer((s) => s.end());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const tcp = check({ type: 'tcp', command: undefined });
      expect(await probeTcp(tcp, { address: '127.0.0.1', port }, signal())).to.deep.equal({
        status: 'passing',
        output: `TCP connect 127.0.0.1:${port}: Success`,
      });
      await new Promise<void>((r) => server.close(() => r()));
      expect((await probeTcp(tcp, { address: '127.0.0.1', port }, signal())).status).to.equal('critical');
    } finally {
      server.close();
    }
  });
});
