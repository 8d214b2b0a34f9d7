/**
 * `POST /v1/jobs/parse` with `Canonicalize: false` on a real agent over loopback (issue 36): the
 * values Nomad's HCL2 parser fills while decoding are there, and nothing canonicalization fills.
 * The expected objects are written from hashicorp/nomad's `jobspec2/parse_job.go`:
 * `normalizeJob` (periodic `SpecType` "cron" when a cron or crons is set), `normalizeTemplates`
 * (`ChangeMode` "restart", `Perms` "0644", `Splay` 5 s, `ErrMissingKey` false) and
 * `normalizeChangeScript` (`Args` [], `Timeout` 5 s, `FailOnError` and `RunOnFirstRender`
 * false); `jobspec2/hcl_conversions.go`'s `decodeConstraint` (no operator is "="). Every other
 * field is as the file has it, or Go's zero (`null` for a pointer), as Nomad's server writes it.
 */
import { expect } from 'chai';
import { AgentProcess } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const S = 1e9;

const JOB = `job "nightly" {
  type = "batch"
  periodic {
    cron             = "*/5 * * * *"
    prohibit_overlap = true
  }
  constraint {
    attribute = "\${attr.kernel.name}"
    value     = "linux"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      template {
        data        = "plain"
        destination = "local/plain"
      }
      template {
        data        = "scripted"
        destination = "local/scripted"
        change_mode = "script"
        change_script {
          command       = "/bin/true"
          fail_on_error = true
        }
      }
      template {
        data                 = "set"
        destination          = "local/set"
        change_mode          = "signal"
        change_signal        = "SIGUSR1"
        splay                = "1s"
        perms                = "0600"
        error_on_missing_key = true
      }
    }
  }
  task "alone" {
    driver = "raw_exec"
    config {
      command = "/bin/true"
    }
    template {
      data        = "alone"
      destination = "local/alone"
    }
  }
}
`;

const CRONS = `job "twice" {
  type = "batch"
  periodic {
    crons = ["0 1 * * *", "0 2 * * *"]
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`;

/** An `api.Template` as jobspec2 decodes `data` and `destination` alone, with `over` set too. */
const template = (over: Record<string, unknown>) => ({
  SourcePath: null,
  DestPath: null,
  EmbeddedTmpl: null,
  ChangeMode: 'restart',
  ChangeScript: null,
  ChangeSignal: null,
  Once: null,
  Splay: 5 * S,
  Perms: '0644',
  Uid: null,
  Gid: null,
  LeftDelim: null,
  RightDelim: null,
  Envvars: null,
  VaultGrace: null,
  Wait: null,
  ErrMissingKey: false,
  ...over,
});

describe('agent: /v1/jobs/parse without Canonicalize has what jobspec2 fills while decoding', function () {
  this.timeout(60_000);
  let agent: AgentProcess;
  before(async () => {
    agent = await new AgentProcess(['-dev']).ready();
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
  });

  const parse = async (hcl: string, canonicalize: boolean) => {
    const r = await agent.req('POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: canonicalize });
    expect(r.status, r.text).to.equal(200);
    return r.json;
  };

  it('fills templates, change scripts, a cron periodic and a constraint operator, and no canonical default', async () => {
    const job = await parse(JOB, false);
    expect(job.Periodic).to.deep.equal({ Enabled: null, Spec: '*/5 * * * *', Specs: null, SpecType: 'cron', ProhibitOverlap: true, TimeZone: null });
    expect(job.Constraints).to.deep.equal([{ LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' }]);
    // The alone task's group comes first, as jobspec2's normalizeJob places it.
    expect(job.TaskGroups.map((g: any) => g.Name)).to.deep.equal(['alone', 'g']);
    expect(job.TaskGroups[0].Tasks[0].Templates).to.deep.equal([template({ EmbeddedTmpl: 'alone', DestPath: 'local/alone' })]);
    expect(job.TaskGroups[1].Tasks[0].Templates).to.deep.equal([
      template({ EmbeddedTmpl: 'plain', DestPath: 'local/plain' }),
      template({
        EmbeddedTmpl: 'scripted',
        DestPath: 'local/scripted',
        ChangeMode: 'script',
        ChangeScript: { Command: '/bin/true', Args: [], Timeout: 5 * S, FailOnError: true, RunOnFirstRender: false },
      }),
      // What the file sets is kept; the signal as written (canonicalization upper-cases it).
      template({
        EmbeddedTmpl: 'set',
        DestPath: 'local/set',
        ChangeMode: 'signal',
        ChangeSignal: 'SIGUSR1',
        Splay: 1 * S,
        Perms: '0600',
        ErrMissingKey: true,
      }),
    ]);
    // Canonical defaults stay to canonicalization: the group's count, the job's priority.
    expect(job.TaskGroups[1].Count).to.equal(null);
    expect(job.Priority).to.equal(null);
  });

  it('gives a periodic block with crons SpecType "cron" too', async () => {
    const job = await parse(CRONS, false);
    expect(job.Periodic).to.deep.equal({
      Enabled: null,
      Spec: null,
      Specs: ['0 1 * * *', '0 2 * * *'],
      SpecType: 'cron',
      ProhibitOverlap: null,
      TimeZone: null,
    });
  });

  it('canonicalizes the same file over the decoded defaults', async () => {
    const job = await parse(JOB, true);
    expect(job.Periodic).to.deep.equal({ Enabled: true, Spec: '*/5 * * * *', Specs: [], SpecType: 'cron', ProhibitOverlap: true, TimeZone: 'UTC' });
    const [, , set] = job.TaskGroups[1].Tasks[0].Templates;
    expect(set).to.include({ ChangeSignal: 'SIGUSR1', Splay: 1 * S, Perms: '0600', LeftDelim: '{{', RightDelim: '}}', Envvars: false });
  });
});
