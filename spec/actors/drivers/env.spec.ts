import { expect } from 'chai';
import { buildTaskEnv, interpolateEnv } from '../../../actors/drivers/env.ts';
import { isSignal, signalName, signalNumber } from '../../../actors/drivers/signals.ts';
import { DriverConfigError } from '../../../model/errors.ts';
import type { Allocation, Task } from '../../../model/types.ts';

const alloc: Allocation = {
  id: '5e9b6a34-1c2d-4e3f-8a9b-0c1d2e3f4a5b', nodeId: 'node-1', jobId: 'example',
  job: { id: 'example', name: 'Example', namespace: 'prod', type: 'service', taskGroups: [] },
  taskGroup: 'cache', desiredStatus: 'run', clientStatus: 'pending', allocModifyIndex: 1,
};
const task: Task = { name: 'redis', driver: 'raw_exec', config: {}, env: { PORT: '6379', CONF: '${NOMAD_TASK_DIR}/redis.conf', KEEP: '${UNKNOWN}' } };
const taskDir = { dir: '/a/redis', localDir: '/a/redis/local', secretsDir: '/a/redis/secrets' };
const allocDir = { dir: '/a', sharedDir: '/a/alloc' };

describe('buildTaskEnv', () => {
  it('sets Nomad\'s variables with host paths for raw_exec, then the task env on top', () => {
    const env = buildTaskEnv({ alloc, task, taskDir, allocDir, allocIndex: 2, datacenter: 'dc1' });
    expect(env).to.deep.equal({
      NOMAD_ALLOC_DIR: '/a/alloc', NOMAD_TASK_DIR: '/a/redis/local', NOMAD_SECRETS_DIR: '/a/redis/secrets',
      NOMAD_ALLOC_ID: alloc.id, NOMAD_SHORT_ALLOC_ID: '5e9b6a34', NOMAD_ALLOC_NAME: 'Example.cache[2]', NOMAD_ALLOC_INDEX: '2',
      NOMAD_JOB_ID: 'example', NOMAD_JOB_NAME: 'Example', NOMAD_GROUP_NAME: 'cache', NOMAD_TASK_NAME: 'redis',
      NOMAD_NAMESPACE: 'prod', NOMAD_DC: 'dc1',
      PORT: '6379', CONF: '/a/redis/local/redis.conf', KEEP: '${UNKNOWN}',
    });
  });

  it('uses the in-chroot paths for exec, and index 0 when unknown', () => {
    const env = buildTaskEnv({ alloc, task, taskDir, allocDir, fsIsolation: 'chroot' });
    expect(env.NOMAD_ALLOC_DIR).to.equal('/alloc');
    expect(env.NOMAD_TASK_DIR).to.equal('/local');
    expect(env.NOMAD_SECRETS_DIR).to.equal('/secrets');
    expect(env.NOMAD_ALLOC_NAME).to.equal('Example.cache[0]');
    expect(env.CONF).to.equal('/local/redis.conf');
    expect(env).not.to.have.property('NOMAD_DC');
  });

  it('passes the host env underneath, minus the denylist; the task env wins', () => {
    const env = buildTaskEnv({ alloc, task, taskDir, allocDir, hostEnv: { PATH: '/bin', VAULT_TOKEN: 'x', PORT: '1', NOMAD_TASK_NAME: 'spoof' } });
    expect(env.PATH).to.equal('/bin');
    expect(env).not.to.have.property('VAULT_TOKEN');
    expect(env.PORT).to.equal('6379');
    expect(env.NOMAD_TASK_NAME).to.equal('redis');
  });

  it('interpolateEnv replaces ${NAME} and ${env.NAME}', () => {
    expect(interpolateEnv('${A}-${env.B}-${C}', { A: '1', B: '2' })).to.equal('1-2-${C}');
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
