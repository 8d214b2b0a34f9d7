/**
 * What a request can make the agent do or hoard (the audit's medium and low findings), each as a
 * clear 400 naming the field, nothing registered: a huge `count` (job and scale), a variable
 * default substituted a thousand times, job IDs and names no store should hold, write bodies of
 * the wrong shape (scheduler config, plan, `TaskGroups`), an fs read of a FIFO a task made.
 */
import { expect } from 'chai';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';
import { MAX_SUBSTITUTED_TOTAL } from '../../agent/jobspec/variables.ts';
import { MAX_GROUP_COUNT } from '../../model/schema/limits.ts';
import { http } from '../support/agent.ts';
import type { AllocRunner } from '../../index.ts';

const job = (id: string, extra: Record<string, unknown> = {}) => ({
  Job: { ID: id, TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' } }] }], ...extra },
});

describe('agent: input bounds', function () {
  this.timeout(60_000);
  let agent: Agent;
  const post = (path: string, body: unknown, method = 'POST') => http(method, `${agent.url}${path}`, body);
  before(async () => {
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => {} });
  });
  after(() => agent?.close());

  it(`a count over ${MAX_GROUP_COUNT} is refused at register and at scale, naming the bound; nothing is placed`, async () => {
    const big = job('big');
    (big.Job.TaskGroups[0] as { Count: number }).Count = 1e9;
    const r = await post('/v1/jobs', big);
    expect(r.status).to.equal(400);
    expect(r.text).to.match(/count/i);
    expect(r.text).to.include(String(MAX_GROUP_COUNT));
    expect(agent.core.state.jobs.has('big')).to.equal(false);
    expect((await post('/v1/jobs', job('small'))).status).to.equal(200);
    const scale = await post('/v1/job/small/scale', { Count: 1e9, Target: { Group: 'g' } });
    expect(scale.status).to.equal(400);
    expect(agent.core.state.jobs.get('small')!.version).to.equal(0);
    await post('/v1/job/small?purge=true', undefined, 'DELETE');
  });

  it('a variable substituted past the bound is refused as it is built, not after', async () => {
    const value = 'x'.repeat(64 * 1024);
    const uses = Math.ceil(MAX_SUBSTITUTED_TOTAL / value.length) + 10;
    const hcl = `variable "v" {\n  default = "${value}"\n}\njob "amp" {\n  meta {\n${Array.from({ length: uses }, (_, i) => `    k${i} = "\${var.v}"`).join('\n')}\n  }\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config { command = "/bin/true" }\n    }\n  }\n}\n`;
    const r = await post('/v1/jobs/parse', { JobHCL: hcl });
    expect(r.status).to.equal(400);
    expect(r.text).to.match(/substitut|bound|limit/i);
  });

  it('job IDs with NUL, a newline, a slash, a lone surrogate or 10 KB are refused with a 400; none is stored', async () => {
    for (const id of ['a\u0000b', 'a\nb', 'a/b', 'a\ud800b', 'x'.repeat(10_000), 'has space']) {
      const r = await post('/v1/jobs', job(id));
      expect(r.status, JSON.stringify(id.slice(0, 20))).to.equal(400);
    }
    expect([...agent.core.state.jobs.keys()]).to.deep.equal([]);
  });

  it('write bodies of the wrong shape are refused naming the field', async () => {
    const arr = await post('/v1/operator/scheduler/configuration', []);
    expect(arr.status).to.equal(400);
    const unknown = await post('/v1/operator/scheduler/configuration', { PreemptionConfig: {}, Bogus: 1 });
    expect(unknown.status).to.equal(400);
    expect(unknown.text).to.include('Bogus');
    const plan = await post('/v1/job/other/plan', job('mine'));
    expect(plan.status).to.equal(400);
    const groups = await post('/v1/jobs', { Job: { ID: 'tg', TaskGroups: {} } });
    expect(groups.status).to.equal(400);
    expect(groups.text).to.include('TaskGroups');
    expect(groups.text).to.not.include('is not iterable');
  });

  it('an fs read of a FIFO a task made answers 400 at once (cat, readat, stream); stat still answers, the agent stays responsive', async () => {
    const fifoJob = {
      Job: {
        ID: 'fifo',
        Type: 'batch',
        TaskGroups: [
          {
            Name: 'g',
            Count: 1,
            Tasks: [
              { Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', 'mkfifo "$NOMAD_ALLOC_DIR/pipe" && echo made && exec sleep 1000'] } },
            ],
          },
        ],
      },
    };
    expect((await post('/v1/jobs', fifoJob)).status).to.equal(200);
    // The task says when the pipe exists: wait on its log, not on a clock.
    const runner = await new Promise<AllocRunner>((resolve) => {
      const sub = agent.client.updates$.subscribe(() => {
        const r = agent.client.runners().find((x) => x.alloc().jobId === 'fifo');
        if (!r) return;
        queueMicrotask(() => sub.unsubscribe());
        resolve(r);
      });
    });
    const allocId = runner.alloc().id;
    await runner.waitForTasks('running');
    for await (const chunk of runner.logs('t', 'stdout', { follow: true })) if (chunk.toString().includes('made')) break;
    // A reader that opened the pipe would block until a writer came: each read gets a 400 instead.
    const ac = new AbortController();
    const guard = setTimeout(() => ac.abort(), 10_000);
    try {
      for (const path of [
        `/v1/client/fs/cat/${allocId}?path=alloc/pipe`,
        `/v1/client/fs/readat/${allocId}?path=alloc/pipe&offset=0&limit=16`,
        `/v1/client/fs/stream/${allocId}?path=alloc/pipe&offset=0&origin=start`,
        `/v1/client/fs/stream/${allocId}?path=alloc/pipe&offset=0&origin=start&follow=true`,
      ]) {
        const r = await http('GET', `${agent.url}${path}`, undefined, { signal: ac.signal });
        expect(r.status, path).to.equal(400);
        expect(r.text, path).to.match(/not a regular file|fifo|pipe/i);
      }
      const stat = await http('GET', `${agent.url}/v1/client/fs/stat/${allocId}?path=alloc/pipe`, undefined, { signal: ac.signal });
      expect(stat.status).to.equal(200);
      expect(stat.json.IsDir).to.equal(false);
      expect((await http('GET', `${agent.url}/v1/status/leader`, undefined, { signal: ac.signal })).status).to.equal(200);
    } finally {
      clearTimeout(guard);
    }
    await post('/v1/job/fifo?purge=true', undefined, 'DELETE');
  });
});
