import { expect } from 'chai';
import { readFileSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { detectCgroups, parentCgroupName } from '../../../actors/cgroups/detect.ts';
import type { Client } from '../../../actors/client/types.ts';
import type { Task } from '../../../model/types.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { skipOrFailInCi } from '../../support/skips.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

const isRoot = process.geteuid?.() === 0;

/** The NOMAD_* variables a one-task raw_exec batch alloc sees, read from the env it dumped. */
async function nomadEnvOf(client: Client): Promise<Record<string, string>> {
  const task: Task = { name: 'dump', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', 'env > "$NOMAD_TASK_DIR/env.txt"'] } };
  const r = client.addAlloc(makeAlloc([task], { jobType: 'batch' }));
  await viewWhere(client, r, (a) => a.clientStatus === 'complete');
  const lines = readFileSync(join(r.allocDir.dir, 'dump', 'local', 'env.txt'), 'utf8').split('\n');
  return Object.fromEntries(lines.filter((l) => l.startsWith('NOMAD_')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

describe('client: the task environment and the task dir a task gets', () => {
  const newClient = useTempClients();

  it('a raw_exec task sees NOMAD_* from the alloc, the job, its meta and the client options', async () => {
    const client = newClient({ nodeId: 'node-7', nodeName: 'worker-7', datacenter: 'dc3' });
    const task: Task = {
      name: 'dump',
      driver: 'raw_exec',
      config: { command: '/bin/sh', args: ['-c', 'env > "$NOMAD_TASK_DIR/env.txt"'] },
      meta: { Role: 'task', café: 'au lait' },
      env: { WHERE: '${node.unique.name}/${node.unique.id}' },
      resources: { cpu: 250, memoryMB: 64, memoryMaxMB: 128 },
    };
    const alloc = makeAlloc([task], { jobType: 'batch', name: 'example.web[4]', group: { meta: { role: 'group', zone: 'z' } } });
    alloc.job.region = 'eu';
    alloc.job.meta = { owner: 'ops' };
    alloc.job.parentId = 'example-periodic';
    const r = client.addAlloc(alloc);
    await r.waitFor('stopping');
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    const lines = readFileSync(join(r.allocDir.dir, 'dump', 'local', 'env.txt'), 'utf8').split('\n');
    const env = Object.fromEntries(lines.filter((l) => l.startsWith('NOMAD_')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(env).to.include({
      NOMAD_ALLOC_NAME: 'example.web[4]',
      NOMAD_ALLOC_INDEX: '4',
      NOMAD_GROUP_NAME: 'web',
      NOMAD_JOB_ID: 'example',
      NOMAD_DC: 'dc3',
      NOMAD_REGION: 'eu',
      NOMAD_NAMESPACE: 'default',
      NOMAD_JOB_PARENT_ID: 'example-periodic',
      NOMAD_CPU_LIMIT: '250',
      NOMAD_MEMORY_LIMIT: '64',
      NOMAD_MEMORY_MAX_LIMIT: '128',
      NOMAD_META_owner: 'ops',
      NOMAD_META_OWNER: 'ops',
      NOMAD_META_zone: 'z',
      NOMAD_META_ROLE: 'task',
      NOMAD_META_Role: 'task',
      NOMAD_META_role: 'group',
      NOMAD_TASK_DIR: join(r.allocDir.dir, 'dump', 'local'),
      // Go's CleanEnvVar works on bytes: é is two.
      NOMAD_META_caf__: 'au lait',
    });
    // Nomad has no NOMAD_NODE_ID / NOMAD_NODE_NAME; ${node.unique.*} still interpolates.
    expect(env).to.not.have.any.keys('NOMAD_NODE_ID', 'NOMAD_NODE_NAME');
    expect(lines).to.include('WHERE=worker-7/node-7');
    // NOMAD_PARENT_CGROUP has two specs of its own below: cgroups in use, and off.
  });

  it('with cgroups in use, a task sees the parent cgroup it runs under as NOMAD_PARENT_CGROUP (root only)', async function () {
    if (!isRoot) skipOrFailInCi(this, 'cgroups need root');
    const detected = detectCgroups();
    if (!detected.ok) skipOrFailInCi(this, `no writable cgroup hierarchy: ${detected.reason}`);
    const env = await nomadEnvOf(newClient());
    expect(env.NOMAD_PARENT_CGROUP).to.equal(parentCgroupName(detected.layout));
    // the path ends in the parent cgroup berth was given (BERTH_CGROUP_PARENT, `berth` by default)
    const given = process.env.BERTH_CGROUP_PARENT ?? 'berth';
    expect(env.NOMAD_PARENT_CGROUP!.split('/').at(-1)).to.equal(given.split('/').at(-1));
  });

  it('with cgroups off, a task gets no NOMAD_PARENT_CGROUP', async () => {
    const env = await nomadEnvOf(newClient({ cgroups: { mode: 'off' } }));
    expect(env).to.include.keys('NOMAD_ALLOC_ID', 'NOMAD_TASK_NAME');
    expect(env).to.not.have.property('NOMAD_PARENT_CGROUP');
  });

  (isRoot ? it : it.skip)("the secrets tmpfs is the task's resources.secretsMB, 1 MB by default (root only)", async () => {
    const client = newClient();
    const alloc = makeAlloc([mockTask('big', { run_for: '10s' }, { resources: { secretsMB: 5 } }), mockTask('small', { run_for: '10s' })]);
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates!.big!.state === 'running' && a.taskStates!.small!.state === 'running');
    const sizeMB = (task: string) => {
      const s = statfsSync(join(r.allocDir.dir, task, 'secrets'));
      return (s.blocks * s.bsize) / (1024 * 1024);
    };
    expect(sizeMB('big')).to.equal(5);
    expect(sizeMB('small')).to.equal(1);
  });
  if (!isRoot) console.log('    (task-env: the secrets tmpfs size spec needs root; skipped)');
});
