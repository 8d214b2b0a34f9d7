/**
 * Issue #36 over HTTP, on an in-process agent: `/v1/jobs/parse` as Nomad answers it (defaults only
 * with `Canonicalize: true`; `Variables` as var-file content with HCL values), and the register
 * response's `Warnings` naming each value berth changes or ignores, which `berth job run` prints
 * as nomad does.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';
import { http } from '../support/agent.ts';
import { runMain } from '../support/cli.ts';
import { until } from '../support/until.ts';

/** A batch job with a service of each kind berth changes or ignores a value of. */
const HCL = `job "warned" {
  type        = "batch"
  all_at_once = true
  node_pool   = "gpu"
  group "g" {
    network {
      port "http" {}
    }
    service {
      name = "grp"
      port = "http"
    }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      service {
        name      = "tsk"
        port      = "http"
        provider  = "nomad"
        on_update = "ignore"
      }
    }
  }
}
`;

const WARNINGS = [
  'Job "warned": all_at_once is kept but ignored (one node and one scheduler: nothing to interleave)',
  `Job "warned": node_pool "gpu" is kept but ignored (the job is placed on the agent's one node, whatever its pool)`,
  `Group "g", service "grp": no provider given, so berth uses "nomad" (Nomad's default is Consul, which berth does not run)`,
  'Task "t" in group "g", service "tsk": on_update "ignore" is kept but ignored (every check counts for deployment health)',
];

describe('agent: jobs/parse as Nomad answers it, and the warnings of a register (issue #36)', function () {
  this.timeout(60_000);
  let agent: Agent;
  let dir: string;
  const post = (path: string, body: unknown) => http('POST', `${agent.url}${path}`, body);
  before(async () => {
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => {} });
    dir = mkdtempSync(join(tmpdir(), 'berth-job-warnings-'));
  });
  after(async () => {
    await agent?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('parse: Canonicalize false (or left out) answers the job without defaults (unset fields zero, as Go writes them); true fills them', async () => {
    for (const body of [{ JobHCL: HCL }, { JobHCL: HCL, Canonicalize: false }]) {
      const r = await post('/v1/jobs/parse', body);
      expect(r.status, r.text).to.equal(200);
      // Nomad's answer is its API Job marshalled (issue #35): what was not set is Go's zero value, never a default.
      expect(r.json.Priority).to.equal(null);
      expect(r.json.TaskGroups[0].Count).to.equal(null);
      expect(r.json.TaskGroups[0].Services[0].Provider).to.equal('');
    }
    const canonical = await post('/v1/jobs/parse', { JobHCL: HCL, Canonicalize: true });
    expect(canonical.json.Priority).to.equal(50);
    expect(canonical.json.TaskGroups[0].Count).to.equal(1);
    expect(canonical.json.TaskGroups[0].Services[0]).to.include({ Provider: 'nomad', Cluster: 'default' });
  });

  it('parse: Variables is var-file content, with HCL lists, numbers and maps', async () => {
    const hcl = `variable "args" {
  type = list(string)
}
variable "n" {
  type = number
}
variable "env" {
  type = map(string)
}
job "vars" {
  group "g" {
    count = var.n
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/echo"
        args    = var.args
      }
      env = var.env
    }
  }
}
`;
    const r = await post('/v1/jobs/parse', { JobHCL: hcl, Variables: 'args = ["a", "b"]\nn = 3\nenv = { MODE = "fast" }\n' });
    expect(r.status, r.text).to.equal(200);
    expect(r.json.TaskGroups[0].Count).to.equal(3);
    expect(r.json.TaskGroups[0].Tasks[0].Config.args).to.deep.equal(['a', 'b']);
    expect(r.json.TaskGroups[0].Tasks[0].Env).to.deep.equal({ MODE: 'fast' });
    const json = await post('/v1/jobs/parse', { JobHCL: hcl, Variables: '{"args": ["x"], "n": 2, "env": {}}' });
    expect(json.json.TaskGroups[0].Tasks[0].Config.args).to.deep.equal(['x']);
  });

  it("register: the response's Warnings name each value berth changes or ignores, in Nomad's format", async () => {
    const parsed = await post('/v1/jobs/parse', { JobHCL: HCL });
    const r = await post('/v1/jobs', { Job: parsed.json });
    expect(r.status, r.text).to.equal(200);
    expect(r.json.Warnings).to.equal(`${WARNINGS.length} warnings:\n\n${WARNINGS.map((w) => `* ${w}`).join('\n')}`);
    // Kept as set, but for the provider berth chose.
    const stored = (await http('GET', `${agent.url}/v1/job/warned`)).json;
    expect(stored.AllAtOnce).to.equal(true);
    expect(stored.TaskGroups[0].Services[0].Provider).to.equal('nomad');
    expect(stored.TaskGroups[0].Tasks[0].Services[0].OnUpdate).to.equal('ignore');
    // A job that sets nothing berth changes gets none.
    const plain = await post('/v1/jobs', {
      Job: { ID: 'plain', Type: 'batch', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' } }] }] },
    });
    expect(plain.json.Warnings).to.equal('');
  });

  it('berth job run prints the warnings as nomad does: "Job Warnings:" on stdout, then a blank line', async () => {
    const file = join(dir, 'warned.nomad.hcl');
    writeFileSync(file, HCL.replace('"warned"', '"warned-cli"'));
    const r = await runMain(['job', 'run', '-detach', '-address', agent.url, file]);
    expect(r.code, r.stderr).to.equal(0);
    const lines = WARNINGS.map((w) => `* ${w.replace('"warned"', '"warned-cli"')}`);
    expect(r.stdout).to.include(`Job Warnings:\n${lines.length} warnings:\n\n${lines.join('\n')}\n\n`);
  });

  it('register: the warnings also name a network hostname, enable_tag_override, a check address_mode unlike its service and logs disabled', async () => {
    const hcl = `job "kept" {
  type = "batch"
  group "g" {
    network {
      hostname = "h"
      port "http" {}
    }
    service {
      name                = "s"
      provider            = "nomad"
      port                = "http"
      enable_tag_override = true
      check {
        name         = "c"
        type         = "tcp"
        interval     = "10s"
        timeout      = "2s"
        address_mode = "host"
      }
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      logs {
        enabled = false
      }
    }
  }
}
`;
    const parsed = await post('/v1/jobs/parse', { JobHCL: hcl });
    const r = await post('/v1/jobs', { Job: parsed.json });
    expect(r.status, r.text).to.equal(200);
    expect(r.json.Warnings).to.equal(
      [
        '4 warnings:',
        '',
        '* Group "g": network hostname is kept but ignored (berth makes no network namespace)',
        '* Group "g", service "s": enable_tag_override is kept but ignored (a Consul setting)',
        `* Group "g", service "s", check "c": address_mode "host" is kept but ignored (a check is reached at its service's address, address_mode "auto")`,
        `* Task "t" in group "g": logs enabled = false is ignored (berth always keeps the task's logs)`,
      ].join('\n'),
    );
  });

  it('validate/job: a job register would refuse is a 200 with ValidationErrors and Error; Warnings as register gives them; nothing is written', async () => {
    const parsed = (await post('/v1/jobs/parse', { JobHCL: HCL.replace('"warned"', '"checked"') })).json;
    const ok = await http('PUT', `${agent.url}/v1/validate/job`, { Job: parsed });
    const bad = await http('PUT', `${agent.url}/v1/validate/job`, { Job: { ...parsed, TaskGroups: [{ ...parsed.TaskGroups[0], Count: -1 }] } });
    expect([ok.status, ok.json.Error, ok.json.ValidationErrors, ok.json.DriverConfigValidated]).to.deep.equal([200, '', null, true]);
    expect((await http('GET', `${agent.url}/v1/job/checked`)).status, 'validating wrote nothing').to.equal(404);
    expect(ok.json.Warnings).to.equal((await post('/v1/jobs', { Job: parsed })).json.Warnings);
    expect((await http('DELETE', `${agent.url}/v1/job/checked?purge=true`)).status).to.equal(200);
    const refusal = 'job "checked": job.taskGroups[0].count: must not be negative';
    expect([bad.status, bad.json.Error, bad.json.ValidationErrors]).to.deep.equal([200, refusal, [refusal]]);
    expect((await http('GET', `${agent.url}/v1/job/checked`)).status).to.equal(404);
    expect((await post('/v1/jobs', { Job: { ...parsed, TaskGroups: [{ ...parsed.TaskGroups[0], Count: -1 }] } })).status).to.equal(400);
  });

  it('parse: a filesystem function fails as on a Nomad server, "filesystem function disabled"', async () => {
    const hcl =
      'locals {\n  x = file("/etc/hostname")\n}\njob "fs" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = local.x\n      }\n    }\n  }\n}\n';
    const r = await post('/v1/jobs/parse', { JobHCL: hcl });
    expect([r.status, r.text]).to.deep.equal([
      400,
      'job.nomad.hcl:2:3: locals[0].x: Error in function call; Call to function "file" failed: filesystem function disabled.',
    ]);
  });

  it('register: an affinity or a spread is accepted and scored, the alloc still placed, and the warnings say it never moves one', async () => {
    const hcl = `job "scored" {
  type = "batch"
  affinity {
    attribute = "\${attr.kernel.name}"
    value     = "windows"
  }
  group "g" {
    spread {
      attribute = "\${node.datacenter}"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`;
    const parsed = await post('/v1/jobs/parse', { JobHCL: hcl });
    const r = await post('/v1/jobs', { Job: parsed.json });
    expect(r.status, r.text).to.equal(200);
    const never = 'accepted and scored, but on a one-node agent it never changes where an allocation is placed';
    expect(r.json.Warnings).to.equal(`2 warnings:\n\n* Job "scored": affinity ${never}\n* Group "g": spread ${never}`);
    await until(async () => (await http('GET', `${agent.url}/v1/job/scored/allocations`)).json.length === 1);
  });
});
