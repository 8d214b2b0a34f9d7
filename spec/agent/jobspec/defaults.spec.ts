/**
 * Defaults Nomad's job canonicalization writes, pinned value by value (a fixture compared as a
 * subset would let them drift): the `update` block a service or system job gets without one, and
 * `check_restart`'s grace.
 */
import { expect } from 'chai';
import { jobFromApi, parseJobspec } from '../../../agent/jobspec/index.ts';
import { SCRIPT_CHECK_SERVICE_HCL } from '../../support/jobspec-pieces.ts';

const S = 1e9;
/** Nomad's `DefaultUpdateStrategy`. */
const NOMAD_DEFAULT_UPDATE = {
  Stagger: 30 * S,
  MaxParallel: 1,
  HealthCheck: 'checks',
  MinHealthyTime: 10 * S,
  HealthyDeadline: 300 * S,
  ProgressDeadline: 600 * S,
  AutoRevert: false,
  AutoPromote: false,
  Canary: 0,
};

const job = (type: string, extra = '') => `job "j" {
  type = "${type}"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      ${extra}
    }
  }
}
`;

describe('jobspec: the defaults Nomad writes', () => {
  for (const type of ['service', 'system']) {
    it(`a ${type} job without an update block gets Nomad's default one, at the job and on its group`, async () => {
      const api = (await parseJobspec(job(type), { filename: 'j.nomad.hcl' })) as any;
      expect(api.Update).to.deep.equal(NOMAD_DEFAULT_UPDATE);
      expect(api.TaskGroups[0].Update).to.deep.equal(NOMAD_DEFAULT_UPDATE);
    });
  }

  for (const type of ['batch', 'sysbatch']) {
    it(`a ${type} job gets no update block`, async () => {
      const api = (await parseJobspec(job(type), { filename: 'j.nomad.hcl' })) as any;
      expect(api.Update ?? null).to.equal(null);
      expect(api.TaskGroups[0].Update ?? null).to.equal(null);
    });
  }

  it("check_restart without a grace waits Nomad's 1 s; its other defaults are a limit of 0 and no ignoring warnings", async () => {
    const svc = SCRIPT_CHECK_SERVICE_HCL;
    const api = (await parseJobspec(job('service', svc), { filename: 'j.nomad.hcl' })) as any;
    expect(api.TaskGroups[0].Tasks[0].Services[0].Checks[0].CheckRestart).to.deep.equal({ Limit: 3, Grace: 1 * S, IgnoreWarnings: false });
  });

  it('a port without host_network keeps "" (NetworkResource.Canonicalize writes nothing; "default" is the server\'s)', async () => {
    const net = `network {\n    port "http" {}\n    port "lb" { static = 8080 }\n  }\n  task "t" {`;
    const api = (await parseJobspec(job('service').replace('task "t" {', net), { filename: 'j.nomad.hcl' })) as any;
    expect(api.TaskGroups[0].Networks[0].DynamicPorts).to.deep.equal([{ Label: 'http', Value: 0, To: 0 }]);
    expect(api.TaskGroups[0].Networks[0].ReservedPorts).to.deep.equal([{ Label: 'lb', Value: 8080, To: 0 }]);
  });

  it("a parameterized job's payload stays unset (the API's canonicalization leaves it; dispatch reads unset as optional)", async () => {
    const file = job('batch').replace('group "g" {', 'parameterized {\n    meta_required = ["m"]\n  }\n  group "g" {');
    const api = (await parseJobspec(file, { filename: 'j.nomad.hcl' })) as any;
    expect(api.ParameterizedJob).to.deep.equal({ MetaRequired: ['m'] });
    expect(jobFromApi(api).parameterized).to.deep.equal({ metaRequired: ['m'] });
  });

  it("an artifact's empty options and headers are null (TaskArtifact.Canonicalize)", async () => {
    const artifact = `artifact {\n        source = "https://example.com/a.tgz"\n        options {}\n        headers {}\n      }`;
    const api = (await parseJobspec(job('batch', artifact), { filename: 'j.nomad.hcl' })) as any;
    expect(api.TaskGroups[0].Tasks[0].Artifacts).to.deep.equal([
      { GetterSource: 'https://example.com/a.tgz', GetterOptions: null, GetterHeaders: null, GetterMode: 'any', GetterInsecure: false, RelativeDest: 'local/' },
    ]);
  });

  it("a file-mode artifact without destination goes to local/ and the source's last element, query and all (Go's path.Base, as Nomad's API)", async () => {
    const dest = async (source: string) => {
      const artifact = `artifact {\n        source = "${source}"\n        mode = "file"\n      }`;
      const api = (await parseJobspec(job('batch', artifact), { filename: 'j.nomad.hcl' })) as any;
      return api.TaskGroups[0].Tasks[0].Artifacts[0].RelativeDest as string;
    };
    expect(await dest('https://example.com/dir/tool')).to.equal('local/tool');
    expect(await dest('https://example.com/dir/tool?archive=false')).to.equal('local/tool?archive=false');
    expect(await dest('https://example.com/dir/')).to.equal('local/dir');
  });

  it("a check's check_restart cannot undo the service's: its limit wins only above 0, its ignore_warnings only when true (CheckRestart.Merge)", async () => {
    const svc = SCRIPT_CHECK_SERVICE_HCL.replace(
      'check_restart { limit = 3 }',
      'check_restart {\n limit = 0\n ignore_warnings = false\n grace = "5s"\n }',
    ).replace('provider = "nomad"', 'provider = "nomad"\n        check_restart {\n limit = 4\n ignore_warnings = true\n }');
    const api = (await parseJobspec(job('service', svc), { filename: 'j.nomad.hcl' })) as any;
    expect(api.TaskGroups[0].Tasks[0].Services[0].Checks[0].CheckRestart).to.deep.equal({ Limit: 4, Grace: 5 * S, IgnoreWarnings: true });
  });

  it("a service's empty meta block is null (Service.Canonicalize)", async () => {
    const api = (await parseJobspec(job('service', 'service {\n provider = "nomad"\n meta {}\n }'), { filename: 'j.nomad.hcl' })) as any;
    expect(api.TaskGroups[0].Tasks[0].Services[0].Meta).to.equal(null);
  });

  it('a service is named <job>-<group> or <job>-<group>-<task>, address_mode auto; disconnect replaces, reconciling best_score', async () => {
    const text = `job "j" {
  group "g" {
    disconnect {
      lost_after = "1h"
    }
    service {
      provider = "nomad"
    }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      service { provider = "nomad" }
    }
  }
}
`;
    const g = ((await parseJobspec(text, { filename: 'j.nomad.hcl' })) as any).TaskGroups[0];
    const named = [g.Services[0], g.Tasks[0].Services[0]].map((s: any) => [s.Name, s.AddressMode]);
    expect(named).to.deep.equal([
      ['j-g', 'auto'],
      ['j-g-t', 'auto'],
    ]);
    expect(g.Disconnect).to.include({ Replace: true, Reconcile: 'best_score' });
  });

  it("a group's update, reschedule and migrate are the job's merged with its own; a task's restart is the group's merged with its own", async () => {
    const text = `job "j" {
  update { max_parallel = 2 }
  reschedule { attempts = 4 }
  migrate { max_parallel = 3 }
  group "g" {
    update { canary = 1 }
    reschedule { delay = "10s" }
    migrate { min_healthy_time = "20s" }
    restart { attempts = 5 }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      restart { delay = "1s" }
    }
  }
}
`;
    const g = ((await parseJobspec(text, { filename: 'j.nomad.hcl' })) as any).TaskGroups[0];
    expect(g.Update).to.include({ MaxParallel: 2, Canary: 1 });
    expect(g.ReschedulePolicy).to.include({ Attempts: 4, Delay: 10 * S });
    expect(g.Migrate).to.include({ MaxParallel: 3, MinHealthyTime: 20 * S });
    expect(g.RestartPolicy).to.include({ Attempts: 5, Delay: 15 * S });
    expect(g.Tasks[0].RestartPolicy).to.include({ Attempts: 5, Delay: 1 * S });
  });
});
