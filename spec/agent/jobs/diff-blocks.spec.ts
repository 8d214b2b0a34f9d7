/**
 * The plan's job diff, the blocks Nomad diffs with rules of their own: a task's config
 * (flattened whole), networks (no identity), services (matched), artifacts and templates (by
 * destination), the periodic block; and the refusal of two different jobs.
 */
import { expect } from 'chai';
import { jobDiff, JobDiffError } from '../../../agent/jobs/diff/index.ts';
import { goFloat } from '../../../agent/jobs/diff/flat.ts';
import { base, edit, f, group, names, server, task, web } from './diff-support.ts';

describe('agent: the plan diff, blocks with rules of their own', () => {
  it('config is flattened whole: list elements, nested maps, JSON null as nil, numbers as Go prints a float64', () => {
    const d = jobDiff(
      base(),
      edit((j) => (server(j).Config = { command: '/bin/sleep', args: ['100', '200'], labels: [{ team: 'a' }], size: 1000000, port: 8080, opt: null })),
      true,
    );
    expect(task(d).Objects).to.deep.equal([
      {
        Type: 'Edited',
        Name: 'Config',
        Fields: [
          f('None', 'args[0]', '100', '100'),
          f('Added', 'args[1]', '', '200'),
          f('None', 'command', '/bin/sleep', '/bin/sleep'),
          f('Added', 'labels[0][team]', '', 'a'),
          f('Added', 'opt', '', 'nil'),
          f('Added', 'port', '', '8080'),
          f('Added', 'size', '', '1e+06'),
        ],
        Objects: null,
      },
    ]);
    expect(
      names(
        task(
          jobDiff(
            edit((j) => (server(j).Config = {})),
            base(),
            true,
          ),
        ).Objects,
      ),
    ).to.deep.equal(['Added Config']);
  });

  it('goFloat prints as Go’s %v of a float64', () => {
    expect([0, 8080, 100000, 1e6, 1234567, 1.5, 0.0001, 0.00001, -2e21].map(goFloat)).to.deep.equal([
      '0',
      '8080',
      '100000',
      '1e+06',
      '1.234567e+06',
      '1.5',
      '0.0001',
      '1e-05',
      '-2e+21',
    ]);
  });

  it('a network has no identity: a changed port makes a Deleted and an Added network, ports by label', () => {
    const d = jobDiff(
      base(),
      edit((j) => (web(j).Networks[0].DynamicPorts[0].To = 9090)),
      true,
    );
    const nets = group(d).Objects!;
    expect(names(nets)).to.deep.equal(['Added Network', 'Deleted Network']);
    expect(nets[0]!.Objects).to.deep.equal([
      {
        Type: 'Added',
        Name: 'Dynamic Port',
        Fields: [f('Added', 'HostNetwork', '', 'default'), f('Added', 'Label', '', 'http'), f('Added', 'To', '', '9090')],
        Objects: null,
      },
    ]);
  });

  it('services are matched by name and port: an edit keeps one Edited service, its unchanged tags a None set', () => {
    const d = jobDiff(
      base(),
      edit((j) => (web(j).Services[0].Provider = 'consul')),
      true,
    );
    const [svc] = group(d).Objects!;
    expect([svc!.Type, svc!.Fields!.filter((x) => x.Type !== 'None')]).to.deep.equal(['Edited', [f('Edited', 'Provider', 'nomad', 'consul')]]);
    expect(svc!.Objects).to.deep.equal([{ Type: 'None', Name: 'Tags', Fields: [f('None', 'Tags', 'a', 'a'), f('None', 'Tags', 'b', 'b')], Objects: null }]);
    const renamed = jobDiff(
      base(),
      edit((j) => web(j).Services.push({ Name: 'admin', PortLabel: 'admin' })),
      true,
    );
    expect(names(group(renamed).Objects)).to.deep.equal(['Added Service']);
  });

  it('artifacts are matched by destination (an edit is Edited), templates by destination too', () => {
    const art = (src: string) => [{ GetterSource: src, RelativeDest: 'local/', GetterMode: 'any' }];
    const d = jobDiff(
      edit((j) => (server(j).Artifacts = art('https://a/x.tgz'))),
      edit((j) => (server(j).Artifacts = art('https://a/y.tgz'))),
      false,
    );
    expect(task(d).Objects).to.deep.equal([
      { Type: 'Edited', Name: 'Artifact', Fields: [f('Edited', 'GetterSource', 'https://a/x.tgz', 'https://a/y.tgz')], Objects: null },
    ]);
    const tpl = (dest: string, data: string) => ({ DestPath: dest, EmbeddedTmpl: data, ChangeMode: 'restart' });
    const t = jobDiff(
      edit((j) => (server(j).Templates = [tpl('local/a', 'x'), tpl('local/b', 'y')])),
      edit((j) => (server(j).Templates = [tpl('local/b', 'z'), tpl('local/c', 'w')])),
      false,
    );
    expect(names(task(t).Objects)).to.deep.equal(['Edited Template', 'Added Template', 'Deleted Template']);
    expect(task(t).Objects![0]!.Fields).to.deep.equal([f('Edited', 'EmbeddedTmpl', 'y', 'z')]);
  });

  it('a periodic block with its cron set; jobs with different IDs are refused by name', () => {
    const p = (spec: string) => ({ Enabled: true, Spec: spec, SpecType: 'cron', ProhibitOverlap: false, TimeZone: 'UTC' });
    const d = jobDiff(
      edit((j) => (j.Periodic = p('@hourly'))),
      edit((j) => (j.Periodic = p('@daily'))),
      false,
    );
    expect(d.Objects).to.deep.equal([{ Type: 'Edited', Name: 'Periodic', Fields: [f('Edited', 'Spec', '@hourly', '@daily')], Objects: null }]);
    expect(() =>
      jobDiff(
        base(),
        edit((j) => (j.ID = 'other')),
        true,
      ),
    ).to.throw(JobDiffError, 'can not diff jobs with different IDs: "example" and "other"');
  });
});
