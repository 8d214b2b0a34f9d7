import { expect } from 'chai';
import { allocIndexFromName, buildTaskEnv, cleanEnvVar, combinedTaskMeta, interpolateEnv, nodeScope, nodeVariablesOf } from '../../../actors/drivers/env.ts';
import { isSignal, signalName, signalNumber } from '../../../actors/drivers/signals.ts';
import { DriverConfigError } from '../../../model/errors.ts';
import type { Allocation, Task } from '../../../model/types.ts';

const alloc: Allocation = {
  id: '5e9b6a34-1c2d-4e3f-8a9b-0c1d2e3f4a5b',
  nodeId: 'node-1',
  jobId: 'example',
  job: { id: 'example', name: 'Example', namespace: 'prod', type: 'service', taskGroups: [] },
  taskGroup: 'cache',
  desiredStatus: 'run',
  clientStatus: 'pending',
  allocModifyIndex: 1,
};
const task: Task = { name: 'redis', driver: 'raw_exec', config: {}, env: { PORT: '6379', CONF: '${NOMAD_TASK_DIR}/redis.conf', KEEP: '${UNKNOWN}' } };
const taskDir = { dir: '/a/redis', localDir: '/a/redis/local', secretsDir: '/a/redis/secrets' };
const allocDir = { dir: '/a', sharedDir: '/a/alloc' };

describe('buildTaskEnv', () => {
  it("sets Nomad's variables with host paths for raw_exec, then the task env on top", () => {
    const env = buildTaskEnv({ alloc: { ...alloc, name: 'example.cache[2]' }, task, taskDir, allocDir, datacenter: 'dc1' });
    expect(env).to.deep.equal({
      NOMAD_ALLOC_DIR: '/a/alloc',
      NOMAD_TASK_DIR: '/a/redis/local',
      NOMAD_SECRETS_DIR: '/a/redis/secrets',
      NOMAD_ALLOC_ID: alloc.id,
      NOMAD_SHORT_ALLOC_ID: '5e9b6a34',
      NOMAD_ALLOC_NAME: 'example.cache[2]',
      NOMAD_ALLOC_INDEX: '2',
      NOMAD_JOB_ID: 'example',
      NOMAD_JOB_NAME: 'Example',
      NOMAD_GROUP_NAME: 'cache',
      NOMAD_TASK_NAME: 'redis',
      NOMAD_NAMESPACE: 'prod',
      NOMAD_DC: 'dc1',
      NOMAD_REGION: 'global',
      PORT: '6379',
      CONF: '/a/redis/local/redis.conf',
      KEEP: '${UNKNOWN}',
    });
  });

  it("interpolates the node's attr.*, meta.*, node.class and node.pool in env values, and never puts them in the env", () => {
    const nodeVariables = nodeVariablesOf({
      attributes: { 'cpu.arch': 'arm64', 'kernel.name': 'linux' },
      meta: { rack: 'r7' },
      nodeClass: '',
      nodePool: 'edge',
    });
    expect(nodeVariables).to.deep.equal({ 'attr.cpu.arch': 'arm64', 'attr.kernel.name': 'linux', 'meta.rack': 'r7', 'node.class': '', 'node.pool': 'edge' });
    const t: Task = {
      ...task,
      env: { URL: 'https://x/tool-${attr.kernel.name}_${attr.cpu.arch}', WHERE: '${meta.rack}/${node.pool}/[${node.class}]', ID: '${node.unique.id}' },
    };
    const env = buildTaskEnv({ alloc, task: t, taskDir, allocDir, nodeId: 'n-1', nodeVariables });
    expect(env.URL).to.equal('https://x/tool-linux_arm64');
    expect(env.WHERE).to.equal('r7/edge/[]');
    expect(env.ID).to.equal('n-1');
    expect(Object.keys(env).filter((k) => k.includes('.'))).to.deep.equal([]);
    // The node's own names win over a host's variable of the same name, as Nomad's builder sets them last.
    expect(nodeScope({ alloc, nodeId: 'n-1', nodeVariables: { 'node.unique.id': 'spoofed', 'attr.cpu.arch': 'arm64' } })).to.deep.equal({
      'attr.cpu.arch': 'arm64',
      'node.unique.id': 'n-1',
      'node.region': 'global',
    });
  });

  it('uses the in-chroot paths for exec; a nameless alloc is <jobId>.<group>[0]', () => {
    const env = buildTaskEnv({ alloc, task, taskDir, allocDir, fsIsolation: 'chroot' });
    expect(env.NOMAD_ALLOC_DIR).to.equal('/alloc');
    expect(env.NOMAD_TASK_DIR).to.equal('/local');
    expect(env.NOMAD_SECRETS_DIR).to.equal('/secrets');
    expect(env.NOMAD_ALLOC_NAME).to.equal('example.cache[0]');
    expect(env.NOMAD_ALLOC_INDEX).to.equal('0');
    expect(env.CONF).to.equal('/local/redis.conf');
    expect(env).not.to.have.property('NOMAD_DC');
  });

  it('passes the host env underneath, minus the denylist; the host never overrides Nomad variables', () => {
    const env = buildTaskEnv({ alloc, task, taskDir, allocDir, hostEnv: { PATH: '/bin', VAULT_TOKEN: 'x', PORT: '1', NOMAD_TASK_NAME: 'spoof' } });
    expect(env.PATH).to.equal('/bin');
    expect(env).not.to.have.property('VAULT_TOKEN');
    expect(env.PORT).to.equal('6379');
    expect(env.NOMAD_TASK_NAME).to.equal('redis');
  });

  it('takes the index from the alloc name as Nomad reads it (job id and group lengths, not the last bracket)', () => {
    expect(allocIndexFromName('example.cache[12]', 'example', 'cache')).to.equal(12);
    expect(allocIndexFromName('example.ca[che[7]', 'example', 'ca[che')).to.equal(7);
    expect(allocIndexFromName('x', 'example', 'cache')).to.equal(0);
    expect(allocIndexFromName(undefined, 'example', 'cache')).to.equal(0);
    expect(allocIndexFromName('example.cache[x]', 'example', 'cache')).to.equal(0);
  });

  it('sets the limits, region and datacenter from the task, the job and the client', () => {
    const t: Task = { ...task, env: {}, resources: { cpu: 500, memoryMB: 256, memoryMaxMB: 512, secretsMB: 4 } };
    const a: Allocation = { ...alloc, job: { ...alloc.job, region: 'eu', datacenters: ['eu-1'] } };
    const env = buildTaskEnv({ alloc: a, task: t, taskDir, allocDir });
    expect(env).to.include({ NOMAD_CPU_LIMIT: '500', NOMAD_MEMORY_LIMIT: '256', NOMAD_MEMORY_MAX_LIMIT: '512', NOMAD_REGION: 'eu', NOMAD_DC: 'eu-1' });
    expect(buildTaskEnv({ alloc: a, task: t, taskDir, allocDir, region: 'us', datacenter: 'us-2' })).to.include({ NOMAD_REGION: 'us', NOMAD_DC: 'us-2' });
    const wild: Allocation = { ...alloc, job: { ...alloc.job, datacenters: ['eu-*'] } };
    expect(buildTaskEnv({ alloc: wild, task: t, taskDir, allocDir })).not.to.have.property('NOMAD_DC');
    expect(buildTaskEnv({ alloc, task: { ...task, env: {} }, taskDir, allocDir })).not.to.have.any.keys(
      'NOMAD_CPU_LIMIT',
      'NOMAD_MEMORY_LIMIT',
      'NOMAD_MEMORY_MAX_LIMIT',
    );
  });

  it('merges job < group < task meta into NOMAD_META_<KEY> and NOMAD_META_<key>, interpolated and cleaned', () => {
    const t: Task = { ...task, meta: { tier: 'task', 'own-key': '${NOMAD_TASK_NAME}@${node.unique.id}' }, env: { SEEN: '${NOMAD_META_tier}' } };
    const a: Allocation = {
      ...alloc,
      job: { ...alloc.job, meta: { tier: 'job', owner: 'ops', 'a b': 'x' }, taskGroups: [{ name: 'cache', meta: { tier: 'group', zone: 'z1' }, tasks: [t] }] },
    };
    const env = buildTaskEnv({ alloc: a, task: t, taskDir, allocDir, nodeId: 'n-1' });
    expect(env).to.include({
      NOMAD_META_tier: 'task',
      NOMAD_META_TIER: 'task',
      NOMAD_META_owner: 'ops',
      NOMAD_META_OWNER: 'ops',
      NOMAD_META_zone: 'z1',
      NOMAD_META_ZONE: 'z1',
      NOMAD_META_own_key: 'redis@n-1',
      NOMAD_META_OWN_KEY: 'redis@n-1',
      NOMAD_META_a_b: 'x',
      NOMAD_META_A_B: 'x',
      SEEN: 'task',
    });
    expect(Object.keys(env).filter((k) => k.includes('-') || k.includes(' '))).to.deep.equal([]);
    expect(combinedTaskMeta(a, 'redis')).to.deep.equal({
      tier: 'task',
      owner: 'ops',
      'a b': 'x',
      zone: 'z1',
      'own-key': '${NOMAD_TASK_NAME}@${node.unique.id}',
    });
  });

  it('cleanEnvVar keeps letters, _, . and non-leading digits', () => {
    expect(cleanEnvVar('NOMAD_META_a-b.c 1')).to.equal('NOMAD_META_a_b.c_1');
    expect(cleanEnvVar('9lives')).to.equal('_lives');
    // Go indexes bytes: a two-byte UTF-8 character becomes two replacements.
    expect(cleanEnvVar('NOMAD_META_café')).to.equal('NOMAD_META_caf__');
    expect(cleanEnvVar('日')).to.equal('___');
  });

  it('interpolateEnv replaces ${NAME} and ${env.NAME}, node attributes first', () => {
    expect(interpolateEnv('${A}-${env.B}-${C}', { A: '1', B: '2' })).to.equal('1-2-${C}');
    expect(interpolateEnv('${node.region}/${A}', { 'node.region': 'eu' }, { A: 'x', 'node.region': 'no' })).to.equal('eu/x');
  });
});

describe('signals', () => {
  it('maps names, short names and numbers', () => {
    expect(signalNumber('SIGINT')).to.equal(2);
    expect(signalNumber('term')).to.equal(15);
    expect(signalNumber(9)).to.equal(9);
    expect(signalName(10)).to.equal('SIGUSR1');
    expect(signalName('hup')).to.equal('SIGHUP');
    expect(isSignal('SIGNOPE')).to.equal(false);
    expect(() => signalNumber('SIGNOPE')).to.throw(DriverConfigError);
  });
});
