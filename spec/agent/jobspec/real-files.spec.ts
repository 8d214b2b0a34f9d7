/**
 * Issue #36, "Real job files as Nomad reads them": values and shapes ordinary job files use that
 * berth once refused or changed, each read as jobspec2 and Nomad's canonicalization read them.
 */
import { expect } from 'chai';
import { jobFromApi, parseJobspec } from '../../../agent/jobspec/index.ts';
import { JobspecError } from '../../../index.ts';

const file = (task: string, job = '') => `job "j" {
  ${job}
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      ${task}
    }
  }
}
`;
const parse = (text: string) => parseJobspec(text, { filename: 'j.nomad.hcl' }) as Promise<any>;

describe('jobspec: real job files as Nomad reads them (issue #36)', () => {
  it("memory_max = -1 is Nomad's MemoryNoLimit: accepted, kept, no hard limit", async () => {
    const api = await parse(file('resources {\n  memory = 100\n  memory_max = -1\n}'));
    expect(api.TaskGroups[0].Tasks[0].Resources).to.include({ MemoryMB: 100, MemoryMaxMB: -1 });
    expect(jobFromApi(api).taskGroups[0]!.tasks[0]!.resources).to.include({ memoryMB: 100, memoryMaxMB: -1 });
  });

  it('a change_script must set command and fail_on_error (both required in jobspec2): each missing one is named at its block', async () => {
    const template = (script: string) =>
      `template {\n  data = "x"\n  destination = "local/x"\n  change_mode = "script"\n  change_script {\n    ${script}\n  }\n}`;
    const missing = await parse(file(template('args = ["a"]'))).catch((e: Error) => e);
    expect(missing).to.be.instanceOf(JobspecError);
    const lines = String((missing as Error).message)
      .split('\n')
      .filter((l) => l.includes('Missing required argument'))
      .map((l) => l.trim());
    expect(lines).to.deep.equal([
      '11:3: job.taskGroups[0].tasks[0].templates[0].changeScript.command: Missing required argument; The argument "command" is required, but no definition was found.',
      '11:3: job.taskGroups[0].tasks[0].templates[0].changeScript.failOnError: Missing required argument; The argument "fail_on_error" is required, but no definition was found.',
    ]);
    const api = await parse(file(template('command = "/bin/true"\n    fail_on_error = true')));
    expect(api.TaskGroups[0].Tasks[0].Templates[0].ChangeScript).to.include({ Command: '/bin/true', FailOnError: true });
  });

  it('memory_max = -2 is refused by name', async () => {
    const err = await parse(file('resources {\n  memory = 100\n  memory_max = -2\n}')).catch((e: Error) => e);
    expect(String(err)).to.include('resources.memoryMaxMB: must not be negative, but for -1 (no hard limit)');
  });

  it('an artifact destination may be anywhere in the alloc dir: "../alloc/x", and "/local/x" (under the task dir)', async () => {
    for (const dest of ['../alloc/x', '/local/x']) {
      const api = await parse(file(`artifact {\n  source = "https://example.com/a.tgz"\n  destination = "${dest}"\n}`));
      expect(api.TaskGroups[0].Tasks[0].Artifacts[0].RelativeDest).to.equal(dest);
    }
  });

  it('an artifact destination out of the alloc dir ("../../x") is refused with Nomad\'s words', async () => {
    const err = await parse(file('artifact {\n  source = "https://example.com/a.tgz"\n  destination = "../../x"\n}')).catch((e: Error) => e);
    expect(String(err)).to.include('artifacts[0].destination: destination escapes allocation directory');
  });

  it('a task written directly in the job is a group of its own, named after it, count 1, before the declared groups', async () => {
    const text = `job "j" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
  task "solo" {
    driver = "raw_exec"
    config { command = "/bin/true" }
  }
}
`;
    const api = await parse(text);
    expect(api.TaskGroups.map((g: any) => [g.Name, g.Count, g.Tasks.map((t: any) => t.Name)])).to.deep.equal([
      ['solo', 1, ['solo']],
      ['g', 1, ['t']],
    ]);
    expect(jobFromApi(api).taskGroups.map((g) => g.name)).to.deep.equal(['solo', 'g']);
  });

  it("a job-level task's problems name its group's path and its own line", async () => {
    const text = `job "j" {
  task "solo" {
    driver = "raw_exec"
    config { command = "/bin/true" }
    resources {
      memory = 5
    }
    bogus = 1
  }
}
`;
    const err = (await parse(text).catch((e: Error) => e)) as { issues: string[] };
    expect(err.issues).to.have.length(2);
    expect(err.issues[0]).to.equal('6:7: job.taskGroups[0].tasks[0].resources.memoryMB: minimum MemoryMB value is 10; got 5');
    expect(err.issues[1]).to.match(/^8:5: job\.taskGroups\[0\]\.tasks\[0\]\.bogus: unknown field "bogus" in task \(known: driver, /);
  });

  it("a job's ui block is Nomad's UI: {Description, Links: [{Label, URL}]} in the API JSON, and kept in berth's job", async () => {
    const ui = `ui {
    description = "The web tier"
    link {
      label = "Docs"
      url   = "https://example.com/docs"
    }
    link {
      label = "Runbook"
      url   = "https://example.com/runbook"
    }
  }`;
    const api = await parse(file('', ui));
    expect(api.UI).to.deep.equal({
      Description: 'The web tier',
      Links: [
        { Label: 'Docs', URL: 'https://example.com/docs' },
        { Label: 'Runbook', URL: 'https://example.com/runbook' },
      ],
    });
    expect(jobFromApi(api).id).to.equal('j');
    expect((await parse(file('', 'ui {\n  description = "d"\n}'))).UI).to.deep.equal({ Description: 'd', Links: null });
  });

  it('every service, of a task or a group, gets Cluster = "default" as Nomad\'s canonicalization writes it', async () => {
    const text = `job "j" {
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
        name = "tsk"
        port = "http"
      }
    }
  }
}
`;
    const api = await parse(text);
    expect(api.TaskGroups[0].Services[0].Cluster).to.equal('default');
    expect(api.TaskGroups[0].Tasks[0].Services[0].Cluster).to.equal('default');
  });

  it('-var values are read as jobspec2 reads them: text for string and number, an HCL literal for the other types', async () => {
    const text = `variable "tags" {
  type = list(string)
}
variable "env" {
  type = map(string)
}
variable "n" {
  type = number
}
variable "on" {
  type = bool
}
variable "s" {
  type = string
}
job "j" {
  meta {
    s = var.s
  }
  group "g" {
    count = var.n
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/echo"
        args    = var.tags
      }
      env    = var.env
      leader = var.on
    }
  }
}
`;
    const vars = { tags: '["a", "b",]', env: '{ MODE = "fast", "k.2" = "v" }', n: '3', on: 'true', s: '["not", "a", "list"]' };
    const api = (await parseJobspec(text, { filename: 'j.nomad.hcl', vars })) as any;
    const t = api.TaskGroups[0].Tasks[0];
    expect([t.Config.args, t.Env, api.TaskGroups[0].Count, t.Leader, api.Meta.s]).to.deep.equal([
      ['a', 'b'],
      { MODE: 'fast', 'k.2': 'v' },
      3,
      true,
      '["not", "a", "list"]',
    ]);
    const refused = async (v: Record<string, string>) =>
      String(await parseJobspec(text, { filename: 'j.nomad.hcl', vars: { ...vars, ...v } }).catch((e: Error) => e));
    expect(await refused({ tags: '["a", var.x]' })).to.include('variable "tags": the value must be a literal');
    expect(await refused({ tags: '"a"' })).to.include('variable "tags": a list(string) value is required');
    expect(await refused({ on: 'yes' })).to.include('variable "on"');
    expect(await refused({ n: 'three' })).to.include('variable "n": a number is required');
  });
});
