/**
 * Heartbeats on idle streams: `/v1/event/stream` and a followed framed log stream send `{}` every
 * heartbeat interval while nothing else comes (Nomad: 10 s). The agent runs in this process with
 * the interval set to 40 ms, so the spec waits on lines, never on real seconds.
 */
import { expect } from 'chai';
import { request, type IncomingMessage } from 'node:http';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';

/** Opens `url` and resolves with the first `n` newline-terminated lines, then closes it. */
function lines(url: string, n: number, timeoutMs: number): Promise<{ lines: string[]; elapsedMs: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false }, (res: IncomingMessage) => {
      let buf = '';
      const got: string[] = [];
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        let i;
        while ((i = buf.indexOf('\n')) >= 0 && got.length < n) {
          got.push(buf.slice(0, i));
          buf = buf.slice(i + 1);
        }
        if (got.length >= n) {
          clearTimeout(timer);
          req.destroy();
          resolve({ lines: got, elapsedMs: Date.now() - started });
        }
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`fewer than ${n} lines from ${url} within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on('error', (e) => {
      if (!req.destroyed) reject(e);
    });
    req.end();
  });
}

describe('agent: stream heartbeats', function () {
  this.timeout(60_000);
  let agent: Agent | undefined;
  afterEach(async () => {
    await agent?.close();
    agent = undefined;
  });

  it('sends {} on an idle event stream and an idle followed log every heartbeat interval', async () => {
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => undefined, streamHeartbeatMs: 40 });
    // An event stream on a topic nothing publishes: only heartbeats come.
    const ev = await lines(`${agent.url}/v1/event/stream?topic=Deployment:none`, 3, 5000);
    expect(ev.lines).to.deep.equal(['{}', '{}', '{}']);
    expect(ev.elapsedMs).to.be.within(80, 4000);

    // A followed framed log of a task that prints once, then idles: its frame, then heartbeats.
    const reg = await fetch(`${agent.url}/v1/jobs`, {
      method: 'POST',
      body: JSON.stringify({
        Job: {
          ID: 'quiet',
          Type: 'service',
          TaskGroups: [
            {
              Name: 'g',
              Tasks: [
                {
                  Name: 't',
                  Driver: 'raw_exec',
                  Config: { command: '/bin/sh', args: ['-c', "echo once; trap 'exit 0' TERM; while :; do sleep 0.2; done"] },
                  Resources: { CPU: 20, MemoryMB: 16 },
                },
              ],
            },
          ],
        },
      }),
    });
    expect(reg.status).to.equal(200);
    let allocId = '';
    for (let index = 0; !allocId;) {
      const res = await fetch(`${agent.url}/v1/job/quiet/allocations?index=${index}&wait=5s`);
      index = Number(res.headers.get('x-nomad-index'));
      const list = (await res.json()) as { ID: string; ClientStatus: string }[];
      if (list[0]?.ClientStatus === 'running') allocId = list[0].ID;
    }
    const log = await lines(`${agent.url}/v1/client/fs/logs/${allocId}?task=t&type=stdout&follow=true&origin=start&offset=0`, 3, 5000);
    const first = JSON.parse(log.lines[0]!) as { Data: string };
    expect(Buffer.from(first.Data, 'base64').toString()).to.equal('once\n');
    expect(log.lines.slice(1)).to.deep.equal(['{}', '{}']);
  });
});
