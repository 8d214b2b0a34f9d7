import { expect } from 'chai';
import { buildTaskEnv, portEnv } from '../../../actors/drivers/env.ts';
import type { Allocation, Task } from '../../../model/types.ts';

const alloc: Allocation = {
  id: '5e9b6a34-1c2d-4e3f-8a9b-0c1d2e3f4a5b',
  nodeId: 'node-1',
  jobId: 'web',
  job: { id: 'web', type: 'service', taskGroups: [] },
  taskGroup: 'api',
  desiredStatus: 'run',
  clientStatus: 'pending',
  allocModifyIndex: 1,
  allocatedResources: {
    tasks: {},
    shared: {
      diskMB: 300,
      ports: [
        { label: 'http', value: 23456, to: 0, hostIp: '127.0.0.1' },
        { label: 'db', value: 24000, to: 5432, hostIp: '10.0.0.7' },
        { label: 'v6', value: 8080, to: 0, hostIp: '::1' },
      ],
    },
  },
};
const task: Task = { name: 'server', driver: 'raw_exec', config: {}, env: { LISTEN: '${NOMAD_ADDR_http}' } };
const taskDir = { dir: '/a/server', localDir: '/a/server/local', secretsDir: '/a/server/secrets' };
const allocDir = { dir: '/a', sharedDir: '/a/alloc' };

describe('port variables (allocatedResources.shared.ports)', () => {
  it('sets every NOMAD_*_<label> variable as Nomad does, the `to` port inside', () => {
    const env = portEnv(alloc);
    expect(env).to.include({
      NOMAD_PORT_http: '23456',
      NOMAD_HOST_PORT_http: '23456',
      NOMAD_ALLOC_PORT_http: '23456',
      NOMAD_IP_http: '127.0.0.1',
      NOMAD_HOST_IP_http: '127.0.0.1',
      NOMAD_ADDR_http: '127.0.0.1:23456',
      NOMAD_HOST_ADDR_http: '127.0.0.1:23456',
      NOMAD_PORT_db: '5432',
      NOMAD_ALLOC_PORT_db: '5432',
      NOMAD_HOST_PORT_db: '24000',
      NOMAD_ADDR_db: '10.0.0.7:24000',
      NOMAD_ADDR_v6: '[::1]:8080',
    });
  });

  it('reaches the task environment and its interpolation; no ports, no variables', () => {
    const env = buildTaskEnv({ alloc, task, taskDir, allocDir });
    expect(env.NOMAD_PORT_http).to.equal('23456');
    expect(env.LISTEN).to.equal('127.0.0.1:23456');
    const bare = buildTaskEnv({ alloc: { ...alloc, allocatedResources: undefined }, task, taskDir, allocDir });
    expect(Object.keys(bare).filter((k) => /^NOMAD_(HOST_|ALLOC_)?(PORT|ADDR|IP)_/.test(k))).to.deep.equal([]);
    expect(bare.LISTEN).to.equal('${NOMAD_ADDR_http}');
  });
});
