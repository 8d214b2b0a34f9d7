/**
 * The client fs and log streams honour back-pressure: a reader that stops reading holds the
 * agent's file read back (its memory does not grow by the file's size), and gets every byte once
 * it reads again.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const SIZE = 64 * 1024 * 1024;
const rssKB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
/** Bytes the process has read so far, from files and sockets alike (`rchar`: every read and pread). */
const readBytes = (pid: number) => Number(/^rchar:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);

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
    const readBefore = readBytes(pid);

    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      get(`${agent!.url}/v1/client/fs/cat/${alloc.ID}?path=alloc/data/big`, resolve).on('error', reject),
    );
    res.pause();
    // With back-pressure the agent reads the file only as far as the socket takes it: what it has
    // read stays within the kernel's socket buffers (a few MiB at most) of what this side took off
    // the socket. That is checked after each of 200 requests the agent answers while the reader is
    // paused; an agent that reads ahead and buffers reads the whole 64 MiB long before they are done.
    let grown = 0;
    for (let i = 0; i < 200; i++) {
      await agent.req('GET', '/v1/agent/self');
      const ahead = readBytes(pid) - readBefore - res.socket.bytesRead;
      expect(ahead, `the agent read ${ahead} bytes more than the reader took`).to.be.below(SIZE / 4);
      grown = Math.max(grown, rssKB(pid) - before);
    }
    expect(grown, `the agent grew by ${grown} kB`).to.be.below(SIZE / 1024 / 4);

    let bytes = 0;
    res.on('data', (c: Buffer) => (bytes += c.length));
    res.resume();
    await new Promise((r) => res.on('end', r));
    expect(bytes).to.equal(SIZE);
  });

  it('a log follower that stops reading while the task floods holds neither memory nor more than one rotated file', async () => {
    agent = await new AgentProcess(['-dev']).ready();
    const FLOOD = 96 * 1024 * 1024; // past the rotation's 10 files of 1 MiB: old files are purged under the reader
    await agent.req('POST', '/v1/jobs', {
      Job: {
        ID: 'flood',
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
                  args: ['-c', `sleep 0.5; head -c ${FLOOD} /dev/zero; touch $NOMAD_ALLOC_DIR/data/done; trap 'exit 0' TERM; while :; do sleep 0.2; done`],
                },
                LogConfig: { MaxFiles: 10, MaxFileSizeMB: 1 },
                Resources: { CPU: 20, MemoryMB: 64 },
              },
            ],
          },
        ],
      },
    });
    const [alloc] = await waitFor(agent, '/v1/job/flood/allocations', (l: any[]) => l[0]?.ClientStatus === 'running', 'running');
    const pid = agent.proc.child.pid!;
    const before = rssKB(pid);
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      get(`${agent!.url}/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&follow=true&plain=true&origin=start`, resolve).on('error', reject),
    );
    res.pause();
    let grown = 0;
    try {
      // fs/ls answers at once (no blocking query): poll it while sampling the agent's memory.
      for (let i = 0; ; i++) {
        grown = Math.max(grown, rssKB(pid) - before);
        const ls = await agent.req('GET', `/v1/client/fs/ls/${alloc.ID}?path=alloc/data`);
        if ((ls.json as any[]).some((f) => f.Name === 'done')) break;
        if (i > 3000) throw new Error('the flood never ended');
        await new Promise((r) => setTimeout(r, 20));
      }
      const logs = (await agent.req('GET', `/v1/client/fs/ls/${alloc.ID}?path=alloc/logs`)).json as any[];
      expect(
        logs.map((f) => f.Name),
        'rotation purged the file the reader started in',
      ).to.not.include('t.stdout.0');
      expect(grown, `the agent grew by ${grown} kB`).to.be.below(FLOOD / 1024 / 4);
      // The paused reader keeps at most the one file it is in (deleted by rotation): disk is bounded too.
      const deleted = readdirSync(`/proc/${pid}/fd`).filter((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`).endsWith('(deleted)');
        } catch {
          return false;
        }
      });
      expect(deleted.length, 'rotated-away log files held open').to.be.at.most(1);
      // Reading again, it goes on from where it was and then on to the files still there.
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.resume();
      while (bytes < 12 * 1024 * 1024) await new Promise((r) => setTimeout(r, 20));
    } finally {
      res.destroy();
    }
  });
});
