/**
 * `completeApiJob`: a job filled out to every field of Nomad's API structs, as Nomad's servers
 * write one. Each case asserts the whole job that comes out: the zero of each Go type (`null` for
 * a pointer, slice or map, `""`, `0`, `false`), structs completed inside pointers, slices and
 * maps, `omitempty` fields left out when unset, and what the structs do not know kept as it is.
 */
import { expect } from 'chai';
import { completeApiJob } from '../../../agent/jobspec/complete.ts';

/** Nomad's API `Job` with no field set. */
const JOB = {
  Region: null,
  Namespace: null,
  ID: null,
  Name: null,
  Type: null,
  Priority: null,
  AllAtOnce: null,
  Datacenters: null,
  NodePool: null,
  Constraints: null,
  Affinities: null,
  TaskGroups: null,
  Update: null,
  Multiregion: null,
  Spreads: null,
  Periodic: null,
  ParameterizedJob: null,
  Reschedule: null,
  Migrate: null,
  Meta: null,
  UI: null,
  Stop: null,
  ParentID: null,
  Dispatched: false,
  DispatchIdempotencyToken: null,
  Payload: null,
  ConsulNamespace: null,
  VaultNamespace: null,
  NomadTokenID: null,
  Status: null,
  StatusDescription: null,
  Stable: null,
  Version: null,
  SubmitTime: null,
  CreateIndex: null,
  ModifyIndex: null,
  JobModifyIndex: null,
  VersionTag: null,
};

/** Nomad's API `TaskGroup` with no field set. */
const GROUP = {
  Name: null,
  Count: null,
  Constraints: null,
  Affinities: null,
  Tasks: null,
  Spreads: null,
  Volumes: null,
  RestartPolicy: null,
  Disconnect: null,
  ReschedulePolicy: null,
  EphemeralDisk: null,
  Update: null,
  Migrate: null,
  Networks: null,
  Meta: null,
  Services: null,
  ShutdownDelay: null,
  MaxRunDuration: null,
  StopAfterClientDisconnect: null,
  MaxClientDisconnect: null,
  Scaling: null,
  Consul: null,
  PreventRescheduleOnLost: null,
};

/** Nomad's API `Task` with no field set (no `CSIPluginConfig`: it has `omitempty`). */
const TASK = {
  Name: '',
  Driver: '',
  User: '',
  Lifecycle: null,
  Config: null,
  Constraints: null,
  Affinities: null,
  Env: null,
  Services: null,
  Resources: null,
  RestartPolicy: null,
  Meta: null,
  KillTimeout: null,
  LogConfig: null,
  Artifacts: null,
  Vault: null,
  Consul: null,
  Templates: null,
  DispatchPayload: null,
  VolumeMounts: null,
  Leader: false,
  ShutdownDelay: 0,
  KillSignal: '',
  Kind: '',
  ScalingPolicies: null,
  Secrets: null,
  Identity: null,
  Identities: null,
  Actions: null,
  Schedule: null,
};

const RESOURCES = {
  CPU: null,
  Cores: null,
  MemoryMB: null,
  MemoryMaxMB: null,
  DiskMB: null,
  Networks: null,
  Devices: null,
  NUMA: null,
  SecretsMB: null,
  IOPS: null,
};

describe('jobspec: completeApiJob fills a job out to every field of Nomad API structs', () => {
  it('an empty job: every Job field at its zero (null for pointers, slices and maps; false for a bool)', () => {
    expect(completeApiJob({})).to.deep.equal(JOB);
  });

  it('a small job: structs completed inside pointers, slices of pointers and of values, and maps', () => {
    const job = {
      ID: 'web',
      Datacenters: ['dc1'],
      Meta: { team: 'a' },
      VersionTag: { Name: 'v1' },
      UI: { Links: [{ Label: 'docs' }] },
      TaskGroups: [
        {
          Name: 'g',
          Volumes: { data: { Type: 'host', Source: 'd' } },
          Networks: [{ Mode: 'host', ReservedPorts: [{ Label: 'http', Value: 80 }] }],
          Tasks: [{ Name: 't', Driver: 'docker', Config: { image: 'x', Name: 1 }, Env: { A: '1' }, Resources: { CPU: 100 } }],
        },
      ],
    };
    expect(completeApiJob(job)).to.deep.equal({
      ...JOB,
      ID: 'web',
      Datacenters: ['dc1'],
      Meta: { team: 'a' },
      VersionTag: { Name: 'v1', Description: '', TaggedTime: 0 },
      UI: { Description: '', Links: [{ Label: 'docs', URL: '' }] },
      TaskGroups: [
        {
          ...GROUP,
          Name: 'g',
          Volumes: {
            data: {
              Name: '',
              Type: 'host',
              Source: 'd',
              ReadOnly: false,
              Sticky: false,
              AccessMode: '',
              AttachmentMode: '',
              MountOptions: null,
              PerAlloc: false,
            },
          },
          Networks: [
            {
              Mode: 'host',
              Device: '',
              CIDR: '',
              IP: '',
              DNS: null,
              ReservedPorts: [{ Label: 'http', Value: 80, To: 0, HostNetwork: '', IgnoreCollision: false }],
              DynamicPorts: null,
              Hostname: '',
              MBits: null,
              CNI: null,
            },
          ],
          Tasks: [
            // A driver's Config is a map of any: its keys are the driver's, not struct fields.
            { ...TASK, Name: 't', Driver: 'docker', Config: { image: 'x', Name: 1 }, Env: { A: '1' }, Resources: { ...RESOURCES, CPU: 100 } },
          ],
        },
      ],
    });
  });

  it('an omitempty field is completed when set and stays out when not', () => {
    const job = {
      TaskGroups: [
        {
          Tasks: [
            { Name: 'p', CSIPluginConfig: { ID: 'ebs' } },
            { Name: 'q', CSIPluginConfig: null },
          ],
        },
      ],
    };
    expect(completeApiJob(job)).to.deep.equal({
      ...JOB,
      TaskGroups: [
        {
          ...GROUP,
          Tasks: [
            { ...TASK, Name: 'p', CSIPluginConfig: { ID: 'ebs', Type: '', MountDir: '', StagePublishBaseDir: '', HealthTimeout: 0 } },
            { ...TASK, Name: 'q', CSIPluginConfig: null },
          ],
        },
      ],
    });
  });

  it('keeps keys the structs do not know, nulls, and values of another shape as they are', () => {
    const job = {
      Berth: { Name: 'x' },
      Update: null,
      Spreads: 'not a list',
      Meta: ['not', 'a', 'map'],
      Multiregion: 5,
      Periodic: undefined,
      TaskGroups: [null, { Name: 'g', Volumes: 'not a map', Networks: [{ ReservedPorts: { Label: 'not a list' } }] }],
    };
    expect(completeApiJob(job)).to.deep.equal({
      ...JOB,
      Berth: { Name: 'x' },
      Spreads: 'not a list',
      Meta: ['not', 'a', 'map'],
      Multiregion: 5,
      Periodic: undefined,
      TaskGroups: [
        null,
        {
          ...GROUP,
          Name: 'g',
          Volumes: 'not a map',
          Networks: [
            {
              Mode: '',
              Device: '',
              CIDR: '',
              IP: '',
              DNS: null,
              ReservedPorts: { Label: 'not a list' },
              DynamicPorts: null,
              Hostname: '',
              MBits: null,
              CNI: null,
            },
          ],
        },
      ],
    });
  });

  it('returns a copy: the job given is not changed', () => {
    const job = { ID: 'web', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't' }] }] };
    const before = structuredClone(job);
    const out = completeApiJob(job);
    expect(job).to.deep.equal(before);
    expect(out.TaskGroups[0]).to.not.equal(job.TaskGroups[0]);
  });
});
