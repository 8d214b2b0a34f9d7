/**
 * `template` blocks through the agent, on real processes (issue 38, the part berth serves now):
 * files rendered with Go's text/template and consul-template's functions into the task dir
 * before the task starts, with their `perms`; an `env = true` template's lines in the task's
 * environment; a template that needs Consul or Vault is refused when the job is read, naming
 * the function and the template's path.
 */
import { expect } from 'chai';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const job = (id: string, templates: string, script: string) => `job "${id}" {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
    }
    reschedule {
      attempts = 0
    }
    task "t" {
      driver = "raw_exec"
${templates}
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

describe('agent: template blocks', function () {
  this.timeout(120_000);
  let agent: AgentProcess;
  before(async () => {
    agent = await new AgentProcess(['-dev']).ready();
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
  });

  const run = async (hcl: string) => {
    const parsed = await agent.req('POST', '/v1/jobs/parse', { JobHCL: hcl });
    expect(parsed.status, parsed.text).to.equal(200);
    const r = await agent.req('POST', '/v1/jobs', { Job: parsed.json });
    expect(r.status, r.text).to.equal(200);
    const id = parsed.json.ID as string;
    const [alloc] = await waitFor(
      agent,
      `/v1/job/${id}/allocations`,
      (l: any[]) => l.length === 1 && ['complete', 'failed'].includes(l[0].ClientStatus),
      `${id} done`,
    );
    return alloc;
  };

  it('renders files and env before the task starts, with their perms', async () => {
    const templates = `      template {
        data        = <<EOH
job={{ env "NOMAD_JOB_NAME" }} task={{ env "NOMAD_TASK_NAME" | toUpper }}
{{ range $i, $p := split "," "a,b,c" }}{{ if $i }} {{ end }}{{ $p }}-{{ add $i 1 }}{{ end }}
{{ printf "%05.1f|%-4s|%q" 3.14159 "x" "y" }}
EOH
        destination = "local/app.conf"
        perms       = "0600"
      }
      template {
        data        = "GREETING=\\"hello {{ env \\"NOMAD_JOB_NAME\\" }}\\"\\n# a comment\\nexport LEVEL=debug\\n"
        destination = "secrets/app.env"
        env         = true
      }`;
    const alloc = await run(job('tpl', templates, 'cat local/app.conf; echo "$GREETING/$LEVEL"; stat -c %a local/app.conf'));
    expect(alloc.ClientStatus).to.equal('complete');
    const logs = await agent.req('GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`);
    expect(logs.text).to.equal('job=tpl task=T\na-1 b-2 c-3\n003.1|x   |"y"\nhello tpl/debug\n600\n');
  });

  it('a template needing Consul or Vault is refused at parse, naming the function and the path', async () => {
    const templates = `      template {
        data        = "{{ key \\"service/x\\" }} {{ with secret \\"kv/x\\" }}{{ .Data }}{{ end }}"
        destination = "local/x"
      }`;
    const parsed = await agent.req('POST', '/v1/jobs/parse', { JobHCL: job('consul', templates, 'echo ran') });
    expect(parsed.status).to.equal(400);
    expect(parsed.text).to.include('template function "key" (Consul) is not supported by berth (job.taskGroups[0].tasks[0].templates[0].data)');
  });
});
