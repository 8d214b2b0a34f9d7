/**
 * The client fs and log streams honour back-pressure: a reader that stops reading holds the
 * agent's file read back (its memory does not grow by the file's size), and gets every byte once
 * it reads again.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const SIZE = 64 * 1024 * 1024;
const rssKB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

describe('agent: streams honour back-pressure', function () {
  this.timeout(90_000);
  let agent: AgentProcess | undefined;
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    await stopCliProcesses();
  });

  it('does not buffer a 64 MiB file for a reader that stopped reading', async () => {
    agent = await new AgentProcess(['-dev']).ready();
    await agent.req('POST', '/v1/jobs', {
      Job: {
        ID: 'big',
        Type: 'service',
        TaskGroups: [
          {
            Name: 'g',
            Tasks: [
              {
                Name: 't',
                Driver: 'raw_exec',
                Config: {
                  command: '/bin/sh',
                  args: [
                    '-c',
                    `head -c ${SIZE} /dev/zero > $NOMAD_ALLOC_DIR/data/big.tmp && mv $NOMAD_ALLOC_DIR/data/big.tmp $NOMAD_ALLOC_DIR/data/big; trap 'exit 0' TERM; while :; do sleep 0.2; done`,
                  ],
                },
                Resources: { CPU: 20, MemoryMB: 64 },
              },
            ],
          },
        ],
      },
    });
    const [alloc] = await waitFor(agent, '/v1/job/big/allocations', (l: any[]) => l[0]?.ClientStatus === 'running', 'running');
    await waitFor(agent, `/v1/client/fs/stat/${alloc.ID}?path=alloc/data/big`, (s) => s.Size === SIZE, 'the file written');
    const pid = agent.proc.child.pid!;
    const before = rssKB(pid);

    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      get(`${agent!.url}/v1/client/fs/cat/${alloc.ID}?path=alloc/data/big`, resolve).on('error', reject),
    );
    res.pause();
    // Let the agent push what the socket takes: with back-pressure it then waits for 'drain'.
    let grown = 0;
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 50));
      grown = Math.max(grown, rssKB(pid) - before);
    }
    expect(grown, `the agent grew by ${grown} kB`).to.be.below(SIZE / 1024 / 4);

    let bytes = 0;
    res.on('data', (c: Buffer) => (bytes += c.length));
    res.resume();
    await new Promise((r) => res.on('end', r));
    expect(bytes).to.equal(SIZE);
  });
});
