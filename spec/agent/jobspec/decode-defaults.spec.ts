/**
 * jobspec2's decode-time defaults (issue 36) belong to the HCL parser: a job file in HCL's JSON
 * syntax gets them as one in HCL does, an API job (`{"Job": {...}}`, which Nomad never runs
 * through jobspec2) keeps exactly what it has until canonicalization.
 */
import { expect } from 'chai';
import { parseJobspec } from '../../../agent/jobspec/index.ts';

const task = { Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' }, Templates: [{ EmbeddedTmpl: 'x', DestPath: 'local/x' }] };

describe('jobspec: the defaults filled while decoding', () => {
  it('an HCL JSON-syntax job file gets the template defaults and the periodic SpecType', async () => {
    const text = JSON.stringify({
      job: {
        j: {
          type: 'batch',
          periodic: { cron: '@daily' },
          group: { g: { task: { t: { driver: 'raw_exec', config: { command: '/bin/true' }, template: { data: 'x', destination: 'local/x' } } } } },
        },
      },
    });
    const job = await parseJobspec(text, { filename: 'j.nomad.json', canonicalize: false });
    expect(job.Periodic).to.deep.equal({ Spec: '@daily', SpecType: 'cron' });
    expect((job.TaskGroups![0]!.Tasks as any[])[0].Templates).to.deep.equal([
      { EmbeddedTmpl: 'x', DestPath: 'local/x', ChangeMode: 'restart', Perms: '0644', Splay: 5e9, ErrMissingKey: false },
    ]);
  });

  it('an API job keeps what it has: no decode defaults', async () => {
    const api = { ID: 'j', Type: 'batch', Periodic: { Spec: '@daily' }, TaskGroups: [{ Name: 'g', Tasks: [task] }] };
    const job = await parseJobspec(JSON.stringify({ Job: api }), { filename: 'j.json', canonicalize: false });
    expect(job).to.deep.equal(api);
  });
});
