/**
 * Templates and Nomad Variables through the agent, on real processes (issue 38's proofs): a
 * template reading `nomadVar` renders before the task starts; `berth var put` re-renders it and
 * restarts the task (`change_mode = "restart"`) or signals it (`signal`); a missing variable
 * blocks the task with Nomad's event until `berth var put`; `nomadService` lists another job's
 * service and re-renders when its alloc goes; a job cannot read another job's variables.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const task = (body: string, script: string) => `    task "t" {
      driver = "raw_exec"
${body}
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
      resources {
        cpu    = 50
        memory = 32
      }
      kill_timeout = "1s"
    }`;

const job = (id: string, type: 'service' | 'batch', body: string, script: string, extra = '') => `job "${id}" {
  type = "${type}"
  group "g" {
    restart {
      attempts = 2
      delay    = "0s"
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
${extra}
${task(body, script)}
  }
}
`;

const tpl = (data: string, more = '') => `      template {
        data        = ${JSON.stringify(data)}
        destination = "local/app.conf"
${more}
      }`;

/** Appends what the task saw at each start (or signal) to the alloc dir's `seen`. */
const SEEN = 'cat local/app.conf >> "$NOMAD_ALLOC_DIR/seen"';

describe('agent: templates read Nomad Variables and services, re-rendered on change', function () {
  this.timeout(120_000);
  let agent: AgentProcess;
  before(async () => {
    agent = await new AgentProcess(['-dev']).ready();
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
  });

  const varPut = async (path: string, ...items: string[]) => {
    const r = await agent.cli(['var', 'put', '-force', '-out=none', path, ...items]);
    expect(r.code, r.stderr).to.equal(0);
  };
  const register = async (hcl: string) => {
    const parsed = await agent.req('POST', '/v1/jobs/parse', { JobHCL: hcl });
    expect(parsed.status, parsed.text).to.equal(200);
    const r = await agent.req('POST', '/v1/jobs', { Job: parsed.json });
    expect(r.status, r.text).to.equal(200);
    return parsed.json.ID as string;
  };
  const allocOf = async (id: string, pred: (a: any) => boolean, what: string) =>
    (await waitFor(agent, `/v1/job/${id}/allocations`, (l: any[]) => l.length === 1 && pred(l[0]), what))[0];
  const seen = async (allocId: string) => (await agent.req('GET', `/v1/client/fs/cat/${allocId}?path=alloc/seen`)).text;
  const fullAlloc = async (allocId: string) => (await agent.req('GET', `/v1/allocation/${allocId}`)).json;

  it('renders before the start; berth var put re-renders and restarts the task (change_mode = "restart")', async () => {
    await varPut('nomad/jobs/restarts', 'user=ada');
    const id = await register(
      job('restarts', 'service', tpl('user={{ with nomadVar "nomad/jobs/restarts" }}{{ .user }}{{ end }}\n'), `${SEEN}; exec sleep 1000`),
    );
    const alloc = await allocOf(id, (a) => a.ClientStatus === 'running', 'running');
    await waitUntil(async () => (await seen(alloc.ID)) === 'user=ada\n', 'the first start');
    await varPut('nomad/jobs/restarts', 'user=bob');
    await waitUntil(async () => (await seen(alloc.ID)) === 'user=ada\nuser=bob\n', 'the restart');
    const t = (await fullAlloc(alloc.ID)).TaskStates.t;
    expect(t.Restarts).to.equal(1);
    expect(t.Events.some((e: any) => e.Type === 'Restart Signaled' && /Template with change_mode restart re-rendered/.test(JSON.stringify(e)))).to.equal(true);
  });

  it('change_mode = "signal": berth var put re-renders and the task gets change_signal, no restart', async () => {
    await varPut('nomad/jobs/signals', 'user=ada');
    const script = `trap '${SEEN}' HUP; ${SEEN}; while :; do sleep 0.05; done`;
    const id = await register(
      job(
        'signals',
        'service',
        tpl('user={{ with nomadVar "nomad/jobs/signals" }}{{ .user }}{{ end }}\n', '        change_mode   = "signal"\n        change_signal = "SIGHUP"'),
        script,
      ),
    );
    const alloc = await allocOf(id, (a) => a.ClientStatus === 'running', 'running');
    await waitUntil(async () => (await seen(alloc.ID)) === 'user=ada\n', 'the first start');
    await varPut('nomad/jobs/signals', 'user=eve');
    await waitUntil(async () => (await seen(alloc.ID)) === 'user=ada\nuser=eve\n', 'the signal');
    const t = (await fullAlloc(alloc.ID)).TaskStates.t;
    expect(t.Restarts).to.equal(0);
    expect(t.Events.some((e: any) => e.Type === 'Signaling' && e.DisplayMessage === 'Template re-rendered')).to.equal(true);
  });

  it('a missing variable blocks the task with "Missing: nomad.var.block(...)" until berth var put', async () => {
    const id = await register(job('waits', 'batch', tpl('user={{ with nomadVar "nomad/jobs/waits/g/t" }}{{ .user }}{{ end }}\n'), SEEN));
    const blocked = await allocOf(id, (a) => (a.TaskStates?.t?.Events ?? []).some((e: any) => e.Type === 'Template'), 'the Missing event');
    const ev = (blocked.TaskStates.t.Events as any[]).find((e) => e.Type === 'Template');
    expect(ev.DisplayMessage).to.equal('Missing: nomad.var.block(nomad/jobs/waits/g/t@default.global)');
    expect(blocked.TaskStates.t.State).to.equal('pending');
    await varPut('nomad/jobs/waits/g/t', 'user=zed');
    const done = await allocOf(id, (a) => a.ClientStatus === 'complete', 'complete');
    expect(await seen(done.ID)).to.equal('user=zed\n');
  });

  it("with ACLs off a task reads any variable, as Nomad allows every variable read then (the corpus's multiregion template)", async () => {
    await varPut('test/multiregion', 'region=eu');
    await varPut('nomad/jobs/other', 'secret=x');
    const id = await register(
      job(
        'open',
        'batch',
        tpl('{{ with nomadVar "test/multiregion" }}{{ .region }}{{ end }} {{ with nomadVar "nomad/jobs/other" }}{{ .secret }}{{ end }}\n'),
        SEEN,
      ),
    );
    const done = await allocOf(id, (a) => ['complete', 'failed'].includes(a.ClientStatus), 'finished');
    expect(done.ClientStatus, JSON.stringify(done.TaskStates)).to.equal('complete');
    expect(await seen(done.ID)).to.equal('eu x\n');
  });

  it("with ACLs on a job cannot read another job's variables: the task fails with Permission denied", async function () {
    const dir = mkdtempSync(join(tmpdir(), 'berth-acl-vars-'));
    const cfg = join(dir, 'agent.hcl');
    writeFileSync(cfg, 'acl {\n  enabled = true\n}\n');
    const acl = await new AgentProcess(['-dev', '-config', cfg]).ready();
    try {
      const put = await acl.cli(['var', 'put', '-force', '-out=none', 'nomad/jobs/other', 'secret=x']);
      expect(put.code, put.stderr).to.equal(0);
      const parsed = await acl.req('POST', '/v1/jobs/parse', {
        JobHCL: job('nosy', 'batch', tpl('{{ with nomadVar "nomad/jobs/other" }}{{ .secret }}{{ end }}'), SEEN),
      });
      expect((await acl.req('POST', '/v1/jobs', { Job: parsed.json })).status).to.equal(200);
      const [failed] = await waitFor(acl, '/v1/job/nosy/allocations', (l: any[]) => l.length === 1 && l[0].ClientStatus === 'failed', 'failed');
      const text = (failed.TaskStates.t.Events as any[]).map((e) => e.DisplayMessage).join('\n');
      expect(text).to.match(/Template failed: Permission denied: variable "nomad\/jobs\/other"/);
    } finally {
      await acl.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("nomadService lists another job's service and re-renders when its alloc goes", async () => {
    const db = await register(job('db', 'service', '      service {\n        name     = "db"\n        provider = "nomad"\n      }', 'exec sleep 1000'));
    await allocOf(db, (a) => a.ClientStatus === 'running', 'db running');
    const id = await register(
      job(
        'app',
        'service',
        tpl('{{ range nomadService "db" }}{{ .Name }} {{ .JobID }}\n{{ end }}', '        change_mode = "noop"'),
        `${SEEN}; exec sleep 1000`,
      ),
    );
    const alloc = await allocOf(id, (a) => a.ClientStatus === 'running', 'app running');
    const conf = async () => (await agent.req('GET', `/v1/client/fs/cat/${alloc.ID}?path=t/local/app.conf`)).text;
    await waitUntil(async () => (await conf()) === 'db db\n', 'the render with the db instance');
    const stop = await agent.req('DELETE', '/v1/job/db');
    expect(stop.status).to.equal(200);
    await waitUntil(async () => (await conf()) === '', 'the re-render without it');
    expect((await fullAlloc(alloc.ID)).TaskStates.t.Restarts).to.equal(0);
  });

  /** Polls the agent's answers (no fixed sleep: each round is one request). */
  async function waitUntil(pred: () => Promise<boolean>, what: string, ms = 20_000) {
    const end = Date.now() + ms;
    while (!(await pred())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
});
