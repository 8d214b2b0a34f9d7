/**
 * Each status command's whole output for one fixed state, compared as text: a regex per line
 * would let a column move or two values swap. The agent here is the far side of the CLI's
 * boundary: a loopback server answering Nomad-shaped JSON for one job, its allocs, an eval and a
 * deployment, a node and a blocked eval, with distinct numbers in every column (job, alloc,
 * deployment, node and eval status).
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runMain } from '../support/cli.ts';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5) * 1e6; // ns
/** The CLI's clock: 5m10s after T0, so relative times are fixed. */
const NOW = () => T0 / 1e6 + 310_000;
const A1 = 'aaaaaaaa-1111-0000-0000-000000000000';
const A2 = 'bbbbbbbb-2222-0000-0000-000000000000';
const NODE = 'nnnnnnnn-0000-0000-0000-000000000000';
const EVAL = 'eeeeeeee-0000-0000-0000-000000000000';
const DEP = 'dddddddd-0000-0000-0000-000000000000';

const job = {
  ID: 'web',
  Name: 'web',
  Type: 'service',
  Priority: 70,
  Datacenters: ['dc1', 'dc2'],
  Namespace: 'default',
  Status: 'running',
  SubmitTime: T0,
  TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't' }] }],
};
const summary = { JobID: 'web', Summary: { g: { Queued: 1, Starting: 2, Running: 3, Failed: 4, Complete: 5, Lost: 6, Unknown: 7 } } };
const alloc = (id: string, status: string, version: number, createIndex: number) => ({
  ID: id,
  EvalID: EVAL,
  Name: `web.g[${createIndex}]`,
  NodeID: NODE,
  NodeName: 'box',
  JobID: 'web',
  JobVersion: version,
  TaskGroup: 'g',
  DesiredStatus: 'run',
  DesiredDescription: '',
  ClientStatus: status,
  ClientDescription: 'Tasks are running',
  CreateIndex: createIndex,
  CreateTime: T0,
  ModifyTime: T0 + 60e9,
  DeploymentID: DEP,
  DeploymentStatus: { Healthy: true },
  Resources: { CPU: 500, MemoryMB: 256, DiskMB: 300 },
  TaskResources: { t: { CPU: 500, Cores: 0, MemoryMB: 256, MemoryMaxMB: 512, DiskMB: 0 } },
  AllocatedResources: {
    Shared: {
      DiskMB: 300,
      Networks: [
        { Mode: 'host', IP: '127.0.0.1', DynamicPorts: [{ Label: 'http', Value: 23456, To: 0 }], ReservedPorts: [{ Label: 'lb', Value: 9999, To: 80 }] },
      ],
      Ports: [
        { Label: 'http', Value: 23456, To: 0, HostIP: '127.0.0.1' },
        { Label: 'lb', Value: 9999, To: 80, HostIP: '127.0.0.1' },
      ],
    },
  },
  Metrics: {
    NodesEvaluated: 1,
    NodesFiltered: 0,
    NodesExhausted: 0,
    AllocationTime: 52437,
    CoalescedFailures: 0,
    ScoreMetaData: [{ NodeID: NODE, Scores: { binpack: 0.123456, 'job-anti-affinity': 0 }, NormScore: 0.0617 }],
  },
  Job: job,
  TaskStates: {
    t: {
      State: 'running',
      Events: [
        { Type: 'Received', Time: T0, DisplayMessage: 'Task received by client' },
        { Type: 'Started', Time: T0 + 1e9, DisplayMessage: 'Task started by client' },
      ],
    },
  },
});
const deployment = {
  ID: DEP,
  JobID: 'web',
  JobVersion: 3,
  Status: 'running',
  StatusDescription: 'Deployment is running',
  CreateIndex: 9,
  TaskGroups: {
    g: { DesiredTotal: 4, PlacedAllocs: 3, HealthyAllocs: 2, UnhealthyAllocs: 1, ProgressDeadline: 600e9, RequireProgressBy: '0001-01-01T00:00:00Z' },
  },
};

const node = {
  ID: NODE,
  Name: 'box',
  NodePool: 'default',
  Datacenter: 'dc1',
  NodeClass: 'gpu',
  Drain: false,
  SchedulingEligibility: 'eligible',
  Status: 'ready',
  HTTPAddr: '127.0.0.1:4646',
  NodeResources: { Cpu: { CpuShares: 8000 }, Memory: { MemoryMB: 16384 }, Disk: { DiskMB: 102400 } },
  ReservedResources: { Cpu: { CpuShares: 100 }, Memory: { MemoryMB: 256 }, Disk: { DiskMB: 0 } },
  Drivers: {
    raw_exec: { Detected: true, Healthy: true, HealthDescription: 'Healthy', UpdateTime: '2026-01-02T03:04:05.123Z' },
    exec: { Detected: true, Healthy: false, HealthDescription: 'no cgroups', UpdateTime: '2026-01-02T03:04:06Z' },
    docker: { Detected: false, Healthy: false, HealthDescription: 'not found', UpdateTime: '2026-01-02T03:04:07Z' },
  },
  Attributes: { 'kernel.name': 'linux', 'cpu.arch': 'amd64' },
  Meta: { rack: 'r1' },
  Events: [{ Timestamp: '2026-01-02T03:04:05Z', Subsystem: 'Cluster', Message: 'Node registered', Details: null }],
};
/** An eval whose placement failed on one group, blocked for more capacity. */
const evaluation = {
  ID: EVAL,
  CreateTime: T0,
  ModifyTime: T0 + 2e9,
  Status: 'complete',
  StatusDescription: '',
  Type: 'service',
  TriggeredBy: 'job-register',
  JobID: 'web',
  Priority: 70,
  PreviousEval: '',
  BlockedEval: 'ffffffff-0000-0000-0000-000000000000',
  FailedTGAllocs: {
    g: {
      NodesEvaluated: 1,
      NodesAvailable: { dc1: 1 },
      ConstraintFiltered: { '${attr.kernel.name} = windows': 1 },
      NodesExhausted: 0,
      CoalescedFailures: 2,
    },
  },
};

const ROUTES: Record<string, unknown> = {
  '/v1/nodes': [node],
  [`/v1/node/${NODE}`]: node,
  // Full allocations, as Nomad's API struct has them: the version is the job's.
  [`/v1/node/${NODE}/allocations`]: [alloc(A1, 'running', 3, 1), alloc(A2, 'failed', 2, 2)].map(({ JobVersion: v, ...full }) => ({
    ...full,
    Job: { ...job, Version: v },
  })),
  '/v1/evaluations': [evaluation],
  [`/v1/evaluation/${EVAL}/allocations`]: [alloc(A1, 'running', 3, 1)],
  '/v1/job/web': job,
  '/v1/job/web/allocations': [alloc(A1, 'running', 3, 1), alloc(A2, 'failed', 2, 2)],
  '/v1/job/web/summary': summary,
  '/v1/job/web/evaluations': [],
  '/v1/job/web/deployment': deployment,
  '/v1/job/web/deployments': [deployment],
  '/v1/deployments': [deployment],
  '/v1/allocations': [alloc(A1, 'running', 3, 1)],
  // The full allocation as Nomad's API struct has it: no JobVersion, the job's Version instead.
  [`/v1/allocation/${A1}`]: (({ JobVersion: _v, ...full }) => ({ ...full, Job: { ...job, Version: 3 } }))(alloc(A1, 'running', 3, 1)),
  [`/v1/client/allocation/${A1}/stats`]: {
    Tasks: { t: { ResourceUsage: { CpuStats: { TotalTicks: 12.7 }, MemoryStats: { RSS: 5 * 1024 * 1024, Usage: 9 * 1024 * 1024, Measured: ['RSS'] } } } },
  },
  [`/v1/client/allocation/${A1}/checks`]: {
    c1: { ID: 'c1', Check: 'alive', Group: 'g', Service: 'web', Mode: 'healthiness', Status: 'success', StatusCode: 200, Output: 'ok', Timestamp: T0 / 1e9 },
  },
};

describe("the CLI's status output, whole, for one fixed state", () => {
  let server: Server;
  let address: string;
  before(async () => {
    server = createServer((req, res) => {
      const body = ROUTES[new URL(req.url!, 'http://x').pathname];
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? 'not found'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('job status: the fields, the summary columns in order, the latest deployment, the allocations newest first', async () => {
    const r = await runMain(['job', 'status', '-address', address, 'web'], '', NOW);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(
      [
        'ID            = web',
        'Name          = web',
        'Submit Date   = 2026-01-02T03:04:05Z',
        'Type          = service',
        'Priority      = 70',
        'Datacenters   = dc1,dc2',
        'Namespace     = default',
        'Node Pool     = <none>',
        'Status        = running',
        'Periodic      = false',
        'Parameterized = false',
        '',
        'Summary',
        'Task Group  Queued  Starting  Running  Failed  Complete  Lost  Unknown',
        'g           1       2         3        4       5         6     7',
        '',
        'Latest Deployment',
        'ID          = dddddddd',
        'Status      = running',
        'Description = Deployment is running',
        '',
        'Deployed',
        'Task Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline',
        'g           4        3       2        1          N/A',
        '',
        'Allocations',
        'ID        Node ID   Task Group  Version  Desired  Status   Created    Modified',
        'bbbbbbbb  nnnnnnnn  g           2        run      failed   5m10s ago  4m10s ago',
        'aaaaaaaa  nnnnnnnn  g           3        run      running  5m10s ago  4m10s ago',
        '',
      ].join('\n'),
    );
  });

  it('alloc status: the fields with deployment health, the service checks, the task events newest first', async () => {
    const r = await runMain(['alloc', 'status', '-address', address, 'aaaa'], '', NOW);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(
      [
        'ID                  = aaaaaaaa-1111-0000-0000-000000000000',
        'Eval ID             = eeeeeeee',
        'Name                = web.g[1]',
        'Node ID             = nnnnnnnn',
        'Node Name           = box',
        'Job ID              = web',
        'Job Version         = 3',
        'Client Status       = running',
        'Client Description  = Tasks are running',
        'Desired Status      = run',
        'Desired Description = <none>',
        'Created             = 5m10s ago',
        'Modified            = 4m10s ago',
        'Deployment ID       = dddddddd',
        'Deployment Health   = healthy',
        '',
        'Allocation Addresses (mode = "host"):',
        'Label  Dynamic  Address',
        '*http  yes      127.0.0.1:23456',
        '*lb    yes      127.0.0.1:9999 -> 80',
        '',
        'Nomad Service Checks:',
        'Service  Task     Name   Mode         Status',
        'web      (group)  alive  healthiness  success',
        '',
        'Task "t" is "running"',
        'Task Resources:',
        'CPU         Memory           Disk     Addresses',
        '12/500 MHz  5.0 MiB/256 MiB  300 MiB',
        '            Max: 512 MiB',
        '',
        'Task Events:',
        'Started At     = N/A',
        'Finished At    = N/A',
        'Total Restarts = 0',
        'Last Restart   = N/A',
        '',
        'Recent Events:',
        'Time                  Type      Description',
        '2026-01-02T03:04:06Z  Started   Task started by client',
        '2026-01-02T03:04:05Z  Received  Task received by client',
        '',
      ].join('\n'),
    );
  });

  it('deployment status: the fields and the Deployed table', async () => {
    const r = await runMain(['deployment', 'status', '-address', address, 'dddd'], '', NOW);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(
      [
        'ID          = dddddddd',
        'Job ID      = web',
        'Job Version = 3',
        'Status      = running',
        'Description = Deployment is running',
        '',
        'Deployed',
        'Task Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline',
        'g           4        3       2        1          N/A',
        '',
      ].join('\n'),
    );
  });

  it('node status: the list, then one node whole with its allocations', async () => {
    const list = await runMain(['node', 'status', '-address', address], '', NOW);
    expect(list.code, list.stderr).to.equal(0);
    expect(list.stdout).to.equal(
      ['ID        Node Pool  DC   Name  Class  Drain  Eligibility  Status', 'nnnnnnnn  default    dc1  box   gpu    false  eligible     ready', ''].join('\n'),
    );
    const one = await runMain(['node', 'status', '-address', address, NODE], '', NOW);
    expect(one.code, one.stderr).to.equal(0);
    expect(one.stdout).to.equal(
      [
        'ID              = nnnnnnnn-0000-0000-0000-000000000000',
        'Name            = box',
        'Node Pool       = default',
        'Class           = gpu',
        'DC              = dc1',
        'Drain           = false',
        'Eligibility     = eligible',
        'Status          = ready',
        'CSI Controllers = <none>',
        'CSI Drivers     = <none>',
        'Host Volumes    = <none>',
        'Host Networks   = <none>',
        'CSI Volumes     = <none>',
        'Driver Status   = exec (unhealthy),raw_exec',
        '',
        'Node Events',
        'Time                  Subsystem  Message',
        '2026-01-02T03:04:05Z  Cluster    Node registered',
        '',
        'Allocated Resources',
        'CPU           Memory          Disk             Alloc Count',
        '500/7900 MHz  256 MiB/16 GiB  300 MiB/100 GiB  1',
        '',
        'Allocations',
        'ID        Node ID   Task Group  Version  Desired  Status   Created    Modified',
        'aaaaaaaa  nnnnnnnn  g           3        run      running  5m10s ago  4m10s ago',
        'bbbbbbbb  nnnnnnnn  g           2        run      failed   5m10s ago  4m10s ago',
        '',
      ].join('\n'),
    );
  });

  it('eval status: the fields, then the failed placements with their reasons and the blocked eval', async () => {
    const r = await runMain(['eval', 'status', '-address', address, 'eeee'], '', NOW);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(
      [
        'ID                 = eeeeeeee',
        'Create Time        = 5m10s ago',
        'Modify Time        = 5m8s ago',
        'Status             = complete',
        'Status Description = complete',
        'Type               = service',
        'TriggeredBy        = job-register',
        'Job ID             = web',
        'Namespace          = <none>',
        'Priority           = 70',
        'Placement Failures = true',
        'Previous Eval      = <none>',
        'Next Eval          = <none>',
        'Blocked Eval       = ffffffff',
        '',
        'Placed Allocations',
        'ID        Node ID   Task Group  Version  Desired  Status   Created    Modified',
        'aaaaaaaa  nnnnnnnn  g           3        run      running  5m10s ago  4m10s ago',
        '',
        'Failed Placements',
        'Task Group "g" (failed to place 3 allocations):',
        '  * Constraint "${attr.kernel.name} = windows": 1 nodes excluded by filter',
        '',
        'Evaluation "ffffffff" waiting for additional capacity to place remainder',
        '',
      ].join('\n'),
    );
  });

  it('alloc status -verbose: as nomad prints it with -verbose', async () => {
    const r = await runMain(['alloc', 'status', '-address', address, '-verbose', 'aaaa'], '', NOW);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(
      [
        'ID                  = aaaaaaaa-1111-0000-0000-000000000000',
        'Eval ID             = eeeeeeee-0000-0000-0000-000000000000',
        'Name                = web.g[1]',
        'Node ID             = nnnnnnnn-0000-0000-0000-000000000000',
        'Node Name           = box',
        'Job ID              = web',
        'Job Version         = 3',
        'Client Status       = running',
        'Client Description  = Tasks are running',
        'Desired Status      = run',
        'Desired Description = <none>',
        'Created             = 2026-01-02T03:04:05Z',
        'Modified            = 2026-01-02T03:05:05Z',
        'Deployment ID       = dddddddd-0000-0000-0000-000000000000',
        'Deployment Health   = healthy',
        'Evaluated Nodes     = 1',
        'Filtered Nodes      = 0',
        'Exhausted Nodes     = 0',
        'Allocation Time     = 52.437µs',
        'Failures            = 0',
        '',
        'Allocation Addresses (mode = "host"):',
        'Label  Dynamic  Address',
        '*http  yes      127.0.0.1:23456',
        '*lb    yes      127.0.0.1:9999 -> 80',
        '',
        'Nomad Service Checks:',
        'Service  Task     Name   Mode         Status',
        'web      (group)  alive  healthiness  success',
        '',
        'Task "t" is "running"',
        'Task Resources:',
        'CPU         Memory           Disk     Addresses',
        '12/500 MHz  5.0 MiB/256 MiB  300 MiB',
        '            Max: 512 MiB',
        '',
        'Task Events:',
        'Started At     = N/A',
        'Finished At    = N/A',
        'Total Restarts = 0',
        'Last Restart   = N/A',
        '',
        'Recent Events:',
        'Time                  Type      Description',
        '2026-01-02T03:04:06Z  Started   Task started by client',
        '2026-01-02T03:04:05Z  Received  Task received by client',
        '',
        'Placement Metrics',
        'Node                                  binpack  job-anti-affinity  final score',
        'nnnnnnnn-0000-0000-0000-000000000000  0.123    0                  0.0617',
        '',
      ].join('\n'),
    );
  });

  it('eval status -verbose: as nomad prints it with -verbose', async () => {
    const r = await runMain(['eval', 'status', '-address', address, '-verbose', 'eeee'], '', NOW);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(
      [
        'ID                 = eeeeeeee-0000-0000-0000-000000000000',
        'Create Time        = 2026-01-02T03:04:05Z',
        'Modify Time        = 2026-01-02T03:04:07Z',
        'Status             = complete',
        'Status Description = complete',
        'Type               = service',
        'TriggeredBy        = job-register',
        'Job ID             = web',
        'Namespace          = <none>',
        'Priority           = 70',
        'Placement Failures = true',
        'Previous Eval      = <none>',
        'Next Eval          = <none>',
        'Blocked Eval       = ffffffff-0000-0000-0000-000000000000',
        '',
        'Placed Allocations',
        'ID                                    Node ID                               Task Group  Version  Desired  Status   Created    Modified',
        'aaaaaaaa-1111-0000-0000-000000000000  nnnnnnnn-0000-0000-0000-000000000000  g           3        run      running  5m10s ago  4m10s ago',
        '',
        'Failed Placements',
        'Task Group "g" (failed to place 3 allocations):',
        '  * Constraint "${attr.kernel.name} = windows": 1 nodes excluded by filter',
        '',
        'Evaluation "ffffffff-0000-0000-0000-000000000000" waiting for additional capacity to place remainder',
        '',
      ].join('\n'),
    );
  });

  it('node status -verbose: as nomad prints it with -verbose', async () => {
    const r = await runMain(['node', 'status', '-address', address, '-verbose', NODE], '', NOW);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(
      [
        'ID              = nnnnnnnn-0000-0000-0000-000000000000',
        'Name            = box',
        'Node Pool       = default',
        'Class           = gpu',
        'DC              = dc1',
        'Drain           = false',
        'Eligibility     = eligible',
        'Status          = ready',
        'CSI Controllers = <none>',
        'CSI Drivers     = <none>',
        '',
        'Drivers',
        'Driver    Detected  Healthy  Message     Time',
        'docker    false     false    not found   2026-01-02T03:04:07Z',
        'exec      true      false    no cgroups  2026-01-02T03:04:06Z',
        'raw_exec  true      true     Healthy     2026-01-02T03:04:05Z',
        '',
        'Node Events',
        'Time                  Subsystem  Message          Details',
        '2026-01-02T03:04:05Z  Cluster    Node registered  <none>',
        '',
        'Allocated Resources',
        'CPU           Memory          Disk             Alloc Count',
        '500/7900 MHz  256 MiB/16 GiB  300 MiB/100 GiB  1',
        '',
        'Allocations',
        'ID                                    Eval ID                               Node ID                               Task Group  Version  Desired  Status   Created               Modified',
        'aaaaaaaa-1111-0000-0000-000000000000  eeeeeeee-0000-0000-0000-000000000000  nnnnnnnn-0000-0000-0000-000000000000  g           3        run      running  2026-01-02T03:04:05Z  2026-01-02T03:05:05Z',
        'bbbbbbbb-2222-0000-0000-000000000000  eeeeeeee-0000-0000-0000-000000000000  nnnnnnnn-0000-0000-0000-000000000000  g           2        run      failed   2026-01-02T03:04:05Z  2026-01-02T03:05:05Z',
        '',
        'Attributes',
        'cpu.arch    = amd64',
        'kernel.name = linux',
        '',
        'Meta',
        'rack = r1',
        '',
      ].join('\n'),
    );
  });

  it('deployment status -verbose: as nomad prints it with -verbose', async () => {
    const r = await runMain(['deployment', 'status', '-address', address, '-verbose', 'dddd'], '', NOW);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(
      [
        'ID          = dddddddd-0000-0000-0000-000000000000',
        'Job ID      = web',
        'Job Version = 3',
        'Status      = running',
        'Description = Deployment is running',
        '',
        'Deployed',
        'Task Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline',
        'g           4        3       2        1          N/A',
        '',
      ].join('\n'),
    );
  });
});
