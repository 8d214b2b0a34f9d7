/**
 * Parameterized jobs and `job dispatch`, as Nomad runs them: registering the parent places
 * nothing; each dispatch registers a child `<parent>/dispatch-<unix>-<8 hex>` whose task finds
 * the payload in `local/<file>` and the dispatch's meta in its env; the parent's rules refuse a
 * missing payload, a missing required meta key and an unpermitted one with Nomad's texts; a second
 * dispatch with the same idempotency token makes no new job.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const JOB = `job "greet" {
  type = "batch"
  parameterized {
    payload       = "required"
    meta_required = ["who"]
    meta_optional = ["why"]
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      dispatch_payload {
        file = "in/payload.txt"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "printf '%s to %s (%s)\\\\n' \\"$(cat \${NOMAD_TASK_DIR}/in/payload.txt)\\" \\"$NOMAD_META_who\\" \\"$NOMAD_JOB_PARENT_ID\\""]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

describe('agent: parameterized jobs and job dispatch', function () {
  this.timeout(120_000);
  let agent: AgentProcess;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-dispatch-'));
    agent = await new AgentProcess(['-dev']).ready();
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registering the parent places nothing; a dispatch runs a child with the payload file and the meta', async () => {
    const file = join(dir, 'greet.nomad.hcl');
    writeFileSync(file, JOB);
    const run = await agent.main(['job', 'run', file]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    expect(run.stdout.trim()).to.equal('Job registration successful');
    expect((await agent.req('GET', '/v1/job/greet/evaluations')).json).to.deep.equal([]);
    expect((await agent.req('GET', '/v1/job/greet/allocations')).json).to.deep.equal([]);
    const parent = (await agent.req('GET', '/v1/job/greet')).json;
    expect(parent.ParameterizedJob).to.deep.include({ Payload: 'required', MetaRequired: ['who'], MetaOptional: ['why'] });

    const input = join(dir, 'input.txt');
    writeFileSync(input, 'hello');
    const d = await agent.main(['job', 'dispatch', '-meta', 'who=world', 'greet', input]);
    expect(d.code, d.stdout + d.stderr).to.equal(0);
    const childId = /^Dispatched Job ID = (greet\/dispatch-\d+-[0-9a-f]{8})$/m.exec(d.stdout)?.[1];
    expect(childId, d.stdout).to.be.a('string');
    expect(d.stdout).to.match(/^Evaluation ID {5}= [0-9a-f]{8}$/m);
    const child = (await agent.req('GET', `/v1/job/${encodeURIComponent(childId!)}`)).json;
    expect(child).to.deep.include({ ParentID: 'greet', Dispatched: true, ID: childId });
    expect(child.ParameterizedJob ?? null).to.equal(null);
    expect(child.Meta).to.deep.include({ who: 'world' });
    const allocs = await waitFor(
      agent,
      `/v1/job/${encodeURIComponent(childId!)}/allocations`,
      (l: any[]) => l.length === 1 && l[0].ClientStatus === 'complete',
      'the dispatched alloc complete',
    );
    const logs = await agent.req('GET', `/v1/client/fs/logs/${allocs[0].ID}?task=t&type=stdout&plain=true`);
    expect(logs.text).to.equal('hello to world (greet)\n');
    // The parent is still never placed.
    expect((await agent.req('GET', '/v1/job/greet/allocations')).json).to.deep.equal([]);
  });

  it("refuses what the parent's rules refuse, in Nomad's words", async () => {
    const cases: Array<[body: unknown, text: string]> = [
      [{ Meta: { who: 'x' } }, 'Payload is not provided but required by parameterized job'],
      [{ Payload: Buffer.from('p').toString('base64') }, 'Dispatch did not provide required meta keys: [who]'],
      [{ Payload: Buffer.from('p').toString('base64'), Meta: { who: 'x', what: 'y' } }, 'Dispatch provided unpermitted meta keys: [what]'],
      [{ Payload: Buffer.alloc(16 * 1024 + 1).toString('base64'), Meta: { who: 'x' } }, 'Payload exceeds maximum size; 16385 > 16384'],
    ];
    for (const [body, text] of cases) {
      const r = await agent.req('POST', '/v1/job/greet/dispatch', body);
      expect(r.status, r.text).to.equal(400);
      expect(r.text).to.include(text);
    }
    const notParam = await agent.req('POST', '/v1/jobs', {
      Job: { ID: 'plain', Type: 'batch', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1ms' } }] }] },
    });
    expect(notParam.status).to.equal(200);
    const r = await agent.req('POST', '/v1/job/plain/dispatch', {});
    expect(r.status).to.equal(400);
    expect(r.text).to.include('Specified job "plain" is not a parameterized job');
    const cli = await agent.main(['job', 'dispatch', 'greet']);
    expect(cli.code).to.equal(1);
    expect(cli.stderr).to.include('Payload is not provided but required by parameterized job');
  });

  it('a second dispatch with the same idempotency token answers the first child', async () => {
    const body = { Payload: Buffer.from('once').toString('base64'), Meta: { who: 'token' } };
    const first = await agent.req('POST', '/v1/job/greet/dispatch?idempotency_token=abc-1', body);
    expect(first.status, first.text).to.equal(200);
    const second = await agent.req('POST', '/v1/job/greet/dispatch?idempotency_token=abc-1', body);
    expect(second.status, second.text).to.equal(200);
    expect(second.json.DispatchedJobID).to.equal(first.json.DispatchedJobID);
    expect(second.json.EvalID).to.equal('');
    const children = ((await agent.req('GET', '/v1/jobs?prefix=greet/')).json as Array<{ ID: string }>).filter((j) => j.ID === first.json.DispatchedJobID);
    expect(children).to.have.length(1);
  });
});
