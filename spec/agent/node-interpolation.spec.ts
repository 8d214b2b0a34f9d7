/**
 * `${attr.*}`, `${meta.*}` and `${node.*}` in a real job file resolve against this node as a Nomad
 * client resolves them: in the task's env and in an artifact's source (a file named per kernel and
 * architecture, the common way jobs fetch the right binary). Before, only `node.unique.*`,
 * `node.datacenter` and `node.region` resolved, and an artifact URL kept `${attr.cpu.arch}` as
 * written (`brucellino-fabio` in the corpus).
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

describe("agent: the node's attributes in a job's interpolation", function () {
  this.timeout(120_000);
  let agent: AgentProcess;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-node-vars-'));
    agent = await new AgentProcess(['-dev']).ready();
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it("an artifact source and the env name ${attr.kernel.name}, ${attr.cpu.arch} and ${node.pool}: the task sees this node's values", async () => {
    const nodes = (await agent.req('GET', '/v1/nodes')).json as Array<{ ID: string }>;
    const node = (await agent.req('GET', `/v1/node/${nodes[0]!.ID}`)).json as { Attributes: Record<string, string>; NodePool: string };
    const kernel = node.Attributes['kernel.name']!;
    const arch = node.Attributes['cpu.arch']!;
    expect(kernel).to.equal('linux');
    writeFileSync(join(dir, `tool-${kernel}_${arch}.txt`), 'the right build');
    const job = `job "nv" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      artifact {
        source      = "${dir}/tool-\${attr.kernel.name}_\${attr.cpu.arch}.txt"
        destination = "local/"
      }
      env {
        ARCH = "\${attr.cpu.arch}"
        POOL = "\${node.pool}"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \\"$ARCH $POOL $(cat \${NOMAD_TASK_DIR}/tool-*.txt)\\""]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;
    const file = join(dir, 'nv.nomad.hcl');
    writeFileSync(file, job);
    const run = await agent.main(['job', 'run', '-detach', file]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    const allocs = await waitFor(
      agent,
      '/v1/job/nv/allocations',
      (l: any[]) => l.length === 1 && ['complete', 'failed'].includes(l[0].ClientStatus),
      'the alloc to finish',
    );
    const logs = await agent.req('GET', `/v1/client/fs/logs/${allocs[0].ID}?task=t&type=stdout&plain=true`);
    expect(allocs[0].ClientStatus, JSON.stringify(allocs[0].TaskStates)).to.equal('complete');
    expect(logs.text).to.equal(`${arch} ${node.NodePool} the right build\n`);
  });
});
