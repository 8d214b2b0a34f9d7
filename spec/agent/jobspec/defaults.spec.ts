/**
 * Defaults Nomad's job canonicalization writes, pinned value by value (a fixture compared as a
 * subset would let them drift): the `update` block a service or system job gets without one, and
 * `check_restart`'s grace.
 */
import { expect } from 'chai';
import { parseJobspec } from '../../../agent/jobspec/index.ts';
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
});
