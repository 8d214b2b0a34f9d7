/**
 * A task-level network (`resources { network { port ... } }`, Nomad before 0.12, which its
 * scheduler still places): berth allocates its ports with the group's, so the task's environment
 * has them (`NOMAD_PORT_<label>`). Two tasks, or a task and its group, naming one label cannot
 * both have it on berth's shared ports: refused by name.
 */
import { expect } from 'chai';
import { startAgent, type Agent } from '../../agent/agent.ts';
import { resolveAgentConfig } from '../../agent/config/config.ts';
import { jobFromApi, parseJobspec } from '../../agent/jobspec/index.ts';
import { JobspecError } from '../../index.ts';

const hcl = (second = '') => `job "legacy" {
  group "g" {
    network {
      port "admin" {}
    }
    task "web" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $NOMAD_PORT_http $NOMAD_PORT_lb > $NOMAD_ALLOC_DIR/ports; trap 'exit 0' TERM; while :; do sleep 0.1; done"]
      }
      resources {
        cpu    = 20
        memory = 16
        network {
          mbits = 10
          port "http" {}
          port "lb" {
            static = 9999
          }
        }
      }
    }
${second}  }
}
`;

describe('jobspec and agent: task-level networks', function () {
  this.timeout(30_000);
  let agent: Agent | undefined;
  after(async () => agent?.close());

  it("keeps the task's network as Nomad's API has it, and gives its ports to the group", async () => {
    const api = await parseJobspec(hcl());
    const task = (api.TaskGroups as any[])[0].Tasks[0];
    expect(task.Resources.Networks).to.deep.equal([
      {
        MBits: 10,
        ReservedPorts: [{ Label: 'lb', Value: 9999, To: 0 }],
        DynamicPorts: [{ Label: 'http', Value: 0, To: 0 }],
      },
    ]);
    const job = jobFromApi(api);
    const [net] = job.taskGroups[0]!.networks!;
    expect(net!.dynamicPorts!.map((p) => p.label)).to.deep.equal(['admin', 'http']);
    expect(net!.reservedPorts!.map((p) => [p.label, p.value])).to.deep.equal([['lb', 9999]]);
  });

  it('refuses a label two tasks (or a task and its group) both give, naming the port', async () => {
    const twice = `    task "other" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        network {
          port "http" {}
        }
      }
    }
`;
    let err: unknown;
    try {
      jobFromApi(await parseJobspec(hcl(twice)));
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(JobspecError);
    expect((err as Error).message).to.include('task network port "http" that the group or another task also has');
    expect((err as Error).message).to.include('job.taskGroups[0].tasks[1].resources.networks[0]');
  });

  it("runs the job: the task's environment has its ports, as the scheduler placed them", async () => {
    agent = await startAgent(resolveAgentConfig([], { dev: true, port: 0 }), { log: () => undefined });
    const post = async (path: string, body: unknown) =>
      (await fetch(`${agent!.url}${path}`, { method: 'POST', body: JSON.stringify(body) })).json() as Promise<any>;
    const parsed = await post('/v1/jobs/parse', { JobHCL: hcl().replace('static = 9999', 'static = 0'), Canonicalize: true });
    const reg = await post('/v1/jobs', { Job: parsed });
    expect(reg.Warnings).to.include('Task "web" in group "g": the ports of its resources network are allocated as the group\'s');
    // A blocking query on the job's allocations until one runs and has written its ports.
    let index = 0;
    let text = '';
    for (let i = 0; i < 100 && !/^\d+/.test(text); i++) {
      const r = await fetch(`${agent.url}/v1/job/legacy/allocations?index=${index}&wait=5s`);
      index = Number(r.headers.get('x-nomad-index'));
      const [a] = (await r.json()) as any[];
      if (a?.ClientStatus !== 'running') continue;
      const cat = await fetch(`${agent.url}/v1/client/fs/cat/${a.ID}?path=alloc/ports`);
      text = cat.ok ? await cat.text() : '';
      if (!/^\d+/.test(text)) await new Promise((r2) => setImmediate(r2));
    }
    const [a] = (await (await fetch(`${agent.url}/v1/job/legacy/allocations`)).json()) as any[];
    const full = await (await fetch(`${agent.url}/v1/allocation/${a.ID}`)).json();
    const byLabel = Object.fromEntries((full.AllocatedResources.Shared.Ports as Array<{ Label: string; Value: number }>).map((p) => [p.Label, p.Value]));
    expect(Object.keys(byLabel).sort()).to.deep.equal(['admin', 'http', 'lb']);
    expect(text.trim()).to.equal(`${byLabel.http} ${byLabel.lb}`);
  });
});
