import { expect } from 'chai';
import { buildTaskEnv, withHostEnv } from '../../../actors/drivers/env.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';

describe('task env without a copy of the host env in every handle', () => {
  const alloc = makeAlloc([mockTask('web', {}, { env: { CONF: '${BERTH_SPEC_HOST}/app.conf', DIR: '${NOMAD_TASK_DIR}' } })]);
  const task = alloc.job.taskGroups[0]!.tasks[0]!;
  const dirs = { taskDir: { dir: '/t', localDir: '/t/local', secretsDir: '/t/secrets' }, allocDir: { dir: '/a', sharedDir: '/a/alloc' } };
  const hostEnv = { BERTH_SPEC_HOST: '/srv', VAULT_TOKEN: 'secret', NOMAD_TASK_DIR: 'host-value' };

  it('resolves ${NAME} against the host env but leaves the host env out of the result', () => {
    const env = buildTaskEnv({ alloc, task, ...dirs, hostEnv, includeHostEnv: false });
    expect(env.CONF).to.equal('/srv/app.conf');
    expect(env.DIR).to.equal('/t/local');
    expect(env).to.not.have.property('BERTH_SPEC_HOST');
    expect(env).to.not.have.property('VAULT_TOKEN');
    expect(Object.keys(env).every((k) => k.startsWith('NOMAD_') || k === 'CONF' || k === 'DIR')).to.equal(true);
  });

  it('gives the same spawn environment as the full copy did (host underneath, denylist applied)', () => {
    const full = buildTaskEnv({ alloc, task, ...dirs, hostEnv });
    const lean = buildTaskEnv({ alloc, task, ...dirs, hostEnv, includeHostEnv: false });
    process.env.BERTH_SPEC_HOST = '/srv';
    process.env.VAULT_TOKEN = 'secret';
    try {
      const spawned = withHostEnv({ env: lean, inheritHostEnv: true });
      for (const [k, v] of Object.entries(full)) expect(spawned[k], k).to.equal(v);
      expect(spawned).to.not.have.property('VAULT_TOKEN');
      expect(withHostEnv({ env: lean })).to.equal(lean);
    } finally {
      delete process.env.BERTH_SPEC_HOST;
      delete process.env.VAULT_TOKEN;
    }
  });
});
