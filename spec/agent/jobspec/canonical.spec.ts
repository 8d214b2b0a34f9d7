/**
 * The canonical API JSON of one small job of each type, compared WHOLE (deep equality, not a
 * subset): every default Nomad's canonicalization writes is pinned, and a default added, dropped
 * or changed (a check_restart grace of 10 s, a system job without its update block, a batch
 * restart policy on a service) fails here. The values are Nomad's: `api.Job.Canonicalize`,
 * `TaskGroup.Canonicalize` and `Task.Canonicalize`, with their per-type restart and reschedule
 * policies.
 */
import { expect } from 'chai';
import { parseJobspec } from '../../../agent/jobspec/index.ts';
import { SCRIPT_CHECK_SERVICE_HCL } from '../../support/jobspec-pieces.ts';

const S = 1e9;
const MIN = 60 * S;
const H = 60 * MIN;

const jobFile = (type: string, extra = '') => `job "j" {
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

/** The job-level fields every type gets. */
const JOB = {
  ID: 'j',
  Name: 'j',
  ParentID: '',
  Namespace: 'default',
  Priority: 50,
  Stop: false,
  Region: 'global',
  NodePool: '',
  AllAtOnce: false,
  ConsulNamespace: '',
  VaultNamespace: '',
  NomadTokenID: '',
  Status: '',
  StatusDescription: '',
  Stable: false,
  Version: 0,
  CreateIndex: 0,
  ModifyIndex: 0,
  JobModifyIndex: 0,
};

/** Nomad's `DefaultUpdateStrategy`. */
const UPDATE = {
  Stagger: 30 * S,
  MaxParallel: 1,
  HealthCheck: 'checks',
  MinHealthyTime: 10 * S,
  HealthyDeadline: 5 * MIN,
  ProgressDeadline: 10 * MIN,
  AutoRevert: false,
  AutoPromote: false,
  Canary: 0,
};

/** Service and system: 2 attempts in 30 min, 15 s apart. */
const SERVICE_RESTART = { Attempts: 2, Interval: 30 * MIN, Delay: 15 * S, Mode: 'fail', RenderTemplates: false };
/** Batch and sysbatch: 3 attempts in 24 h, 15 s apart. */
const BATCH_RESTART = { Attempts: 3, Interval: 24 * H, Delay: 15 * S, Mode: 'fail', RenderTemplates: false };

/** The task, with the restart policy its group hands down. */
const task = (restart: object, extra: object = {}) => ({
  Name: 't',
  Driver: 'raw_exec',
  Config: { command: '/bin/true' },
  Resources: { Cores: 0, CPU: 100, MemoryMB: 300 },
  KillTimeout: 5 * S,
  LogConfig: { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false },
  RestartPolicy: restart,
  Leader: false,
  ShutdownDelay: 0,
  KillSignal: '',
  User: '',
  ...extra,
});

const group = (restart: object, t: object, extra: object = {}) => ({
  Name: 'g',
  Count: 1,
  Tasks: [t],
  EphemeralDisk: { Sticky: false, Migrate: false, SizeMB: 300 },
  RestartPolicy: restart,
  ...extra,
});

const parse = async (type: string, extra = '') => (await parseJobspec(jobFile(type, extra), { filename: 'j.nomad.hcl' })) as unknown;

describe('jobspec: the canonical job of each type, whole', () => {
  it('service: the default update at the job and on the group, the service reschedule and migrate, a check_restart grace of 1 s', async () => {
    const service = SCRIPT_CHECK_SERVICE_HCL;
    const services = [
      {
        Name: 's',
        Provider: 'nomad',
        Cluster: 'default',
        AddressMode: 'auto',
        OnUpdate: 'require_healthy',
        Checks: [
          {
            Type: 'script',
            Command: '/bin/true',
            Interval: 10 * S,
            Timeout: 2 * S,
            OnUpdate: 'require_healthy',
            CheckRestart: { Limit: 3, Grace: 1 * S, IgnoreWarnings: false },
          },
        ],
      },
    ];
    expect(await parse('service', service)).to.deep.equal({
      ...JOB,
      Type: 'service',
      Update: UPDATE,
      TaskGroups: [
        group(SERVICE_RESTART, task(SERVICE_RESTART, { Services: services }), {
          Update: UPDATE,
          ReschedulePolicy: { Attempts: 0, Interval: 0, Delay: 30 * S, DelayFunction: 'exponential', MaxDelay: 1 * H, Unlimited: true },
          Migrate: { MaxParallel: 1, HealthCheck: 'checks', MinHealthyTime: 10 * S, HealthyDeadline: 5 * MIN },
        }),
      ],
    });
  });

  it('batch: no update, no migrate, the batch restart and reschedule policies', async () => {
    expect(await parse('batch')).to.deep.equal({
      ...JOB,
      Type: 'batch',
      TaskGroups: [
        group(BATCH_RESTART, task(BATCH_RESTART), {
          ReschedulePolicy: { Attempts: 1, Interval: 24 * H, Delay: 5 * S, DelayFunction: 'constant', MaxDelay: 0, Unlimited: false },
        }),
      ],
    });
  });

  it('system: the default update at the job and on the group, the service restart policy, no reschedule and no migrate', async () => {
    expect(await parse('system')).to.deep.equal({
      ...JOB,
      Type: 'system',
      Update: UPDATE,
      TaskGroups: [group(SERVICE_RESTART, task(SERVICE_RESTART), { Update: UPDATE })],
    });
  });

  it('sysbatch: no update, no reschedule, no migrate, the batch restart policy', async () => {
    expect(await parse('sysbatch')).to.deep.equal({
      ...JOB,
      Type: 'sysbatch',
      TaskGroups: [group(BATCH_RESTART, task(BATCH_RESTART))],
    });
  });

  it("a template: every field at Nomad's Template.Canonicalize default, the change signal in capitals, a change_script's defaults", async () => {
    const templates = `template {
        data        = "x"
        destination = "local/x"
      }
      template {
        data          = "y"
        destination   = "local/y"
        change_mode   = "signal"
        change_signal = "sigusr1"
      }
      template {
        data        = "z"
        destination = "local/z"
        change_mode = "script"
        change_script {
          command       = "/bin/true"
          fail_on_error = false
        }
      }`;
    const TEMPLATE = {
      SourcePath: '',
      EmbeddedTmpl: 'x',
      DestPath: 'local/x',
      ChangeMode: 'restart',
      ChangeSignal: '',
      Once: false,
      Splay: 5 * S,
      Perms: '0644',
      LeftDelim: '{{',
      RightDelim: '}}',
      Envvars: false,
      ErrMissingKey: false,
      VaultGrace: 0,
    };
    const api = (await parse('batch', templates)) as { TaskGroups: Array<{ Tasks: Array<{ Templates: unknown[] }> }> };
    expect(api.TaskGroups[0]!.Tasks[0]!.Templates).to.deep.equal([
      TEMPLATE,
      { ...TEMPLATE, EmbeddedTmpl: 'y', DestPath: 'local/y', ChangeMode: 'signal', ChangeSignal: 'SIGUSR1' },
      {
        ...TEMPLATE,
        EmbeddedTmpl: 'z',
        DestPath: 'local/z',
        ChangeMode: 'script',
        ChangeScript: { Command: '/bin/true', Args: [], Timeout: 5 * S, FailOnError: false, RunOnFirstRender: false },
      },
    ]);
  });

  it('periodic: no cron is "", no crons an empty list, an empty time zone UTC (PeriodicConfig.Canonicalize)', async () => {
    const file = (p: string) => `job "j" {\n  type = "batch"\n  periodic {\n    ${p}\n  }\n${jobFile('batch').split('\n').slice(2).join('\n')}`;
    const one = (await parseJobspec(file('cron = "@daily"\n    time_zone = ""'), { filename: 'j.nomad.hcl' })) as { Periodic: unknown };
    expect(one.Periodic).to.deep.equal({ Enabled: true, Spec: '@daily', Specs: [], SpecType: 'cron', ProhibitOverlap: false, TimeZone: 'UTC' });
    const many = (await parseJobspec(file('crons = ["@daily", "@hourly"]'), { filename: 'j.nomad.hcl' })) as { Periodic: unknown };
    expect(many.Periodic).to.deep.equal({ Enabled: true, Spec: '', Specs: ['@daily', '@hourly'], SpecType: 'cron', ProhibitOverlap: false, TimeZone: 'UTC' });
  });
});
