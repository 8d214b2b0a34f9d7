/**
 * `berth alloc exec` and `/v1/client/allocation/:id/exec`: a command inside a running task over
 * Nomad's exec WebSocket, stdin in, stdout and stderr out, the command's exit code back.
 */
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { CliProcess, stopCliProcesses } from '../support/cli.ts';

describe('agent: alloc exec', function () {
  this.timeout(60_000);
  let agent: AgentProcess | undefined;
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    await stopCliProcesses();
  });

  it('runs a command in the task with stdin, and exits with its code', async function () {
    agent = await new AgentProcess(['-dev']).ready();
    await agent.req('POST', '/v1/jobs', {
      Job: {
        ID: 'ex',
        Type: 'service',
        TaskGroups: [
          {
            Name: 'g',
            Tasks: [
              {
                Name: 't',
                Driver: 'raw_exec',
                Config: { command: '/bin/sh', args: ['-c', "trap 'exit 0' TERM; while :; do sleep 0.2; done"] },
                Resources: { CPU: 20, MemoryMB: 16 },
              },
            ],
          },
        ],
      },
    });
    const [alloc] = await waitFor(agent, '/v1/job/ex/allocations', (l: any[]) => l[0]?.ClientStatus === 'running', 'running');
    const env = { ...process.env };
    process.env.BERTH_ADDR = agent.url;
    let p: CliProcess;
    try {
      p = new CliProcess(['alloc', 'exec', alloc.ID.slice(0, 8), '/bin/sh', '-c', 'read x; echo "got $x in $NOMAD_TASK_NAME"; echo oops >&2; exit 3'], {
        input: 'hello\n',
      });
    } finally {
      process.env.BERTH_ADDR = env.BERTH_ADDR;
      if (env.BERTH_ADDR === undefined) delete process.env.BERTH_ADDR;
    }
    const r = await p.exited;
    p.leftovers();
    if (/exec is not available in this berth/.test(r.stderr)) this.skip(); // the client of this build has no runner.exec yet
    expect(r.stdout).to.equal('got hello in t\n');
    expect(r.stderr).to.equal('oops\n');
    expect(r.code).to.equal(3);

    // Nomad's CLI asks for a tty when its stdin is a terminal: berth allocates none and says so.
    const url = `${agent.url.replace(/^http/, 'ws')}/v1/client/allocation/${alloc.ID}/exec?task=t&command=${encodeURIComponent('["/bin/sh"]')}&tty=true`;
    const closed = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.on('error', reject);
      ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    });
    expect(closed.code).to.equal(1011);
    expect(closed.reason).to.match(/a tty is not supported by berth; run without one/);
  });
});
