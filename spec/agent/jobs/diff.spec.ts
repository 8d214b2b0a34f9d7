/**
 * The plan's job diff on its own, over pairs of API jobs: one case per rule of Nomad's
 * `Job.Diff` for the job, its groups and tasks (which fields, how they are named, sets, keyed
 * sets, contextual fields, added and deleted groups and tasks, Nomad's order and JSON nulls).
 * The blocks with rules of their own are in diff-blocks.spec.ts.
 */
import { expect } from 'chai';
import { jobDiff } from '../../../agent/jobs/diff/index.ts';
import { base, edit, f, group, names, server, task, web } from './diff-support.ts';

describe('agent: the plan diff (Nomad’s Job.Diff over API jobs)', () => {
  it('the same job (server-set fields aside) is None all through, with nulls where Nomad has nil lists', () => {
    const again = edit((j) => Object.assign(j, { Version: 3, Status: 'running', SubmitTime: 9, ModifyIndex: 7, JobModifyIndex: 7 }));
    const d = jobDiff(base(), again, true);
    expect(d).to.deep.equal({
      Type: 'None',
      ID: 'example',
      Fields: null,
      Objects: null,
      TaskGroups: [
        {
          Type: 'None',
          Name: 'web',
          Fields: null,
          Objects: null,
          Tasks: [{ Type: 'None', Name: 'server', Fields: null, Objects: null, Annotations: null }],
          Updates: null,
        },
      ],
    });
  });

  it('a new job is all Added: its primitive fields with the structs’ zero values, empty strings left out', () => {
    const d = jobDiff(undefined, base(), true);
    expect(d.Type).to.equal('Added');
    expect(d.Fields).to.deep.equal([
      f('Added', 'AllAtOnce', '', 'false'),
      f('Added', 'Dispatched', '', 'false'),
      f('Added', 'Meta[owner]', '', 'ops'),
      f('Added', 'Name', '', 'example'),
      f('Added', 'Namespace', '', 'default'),
      f('Added', 'Priority', '', '50'),
      f('Added', 'Region', '', 'global'),
      f('Added', 'Stop', '', 'false'),
      f('Added', 'Type', '', 'service'),
    ]);
    expect(d.Objects).to.deep.equal([{ Type: 'Added', Name: 'Datacenters', Fields: [f('Added', 'Datacenters', '', 'dc1')], Objects: null }]);
    const g = group(d);
    expect([g.Type, g.Fields]).to.deep.equal(['Added', [f('Added', 'Count', '', '1'), f('Added', 'PreventRescheduleOnLost', '', 'false')]]);
    expect(names(g.Objects)).to.deep.equal(['Added RestartPolicy', 'Added Update', 'Added Network', 'Added Service']);
    expect(task(d).Type).to.equal('Added');
    // Inside an added block, contextual lists the empty strings too, as None.
    const service = g.Objects!.find((o) => o.Name === 'Service')!;
    expect(service.Fields!.find((x) => x.Name === 'Address')).to.deep.equal(f('None', 'Address', '', ''));
  });

  it('changed job fields only, never contextual; Meta by key', () => {
    const d = jobDiff(
      base(),
      edit((j) => {
        j.Priority = 70;
        j.Meta = { team: 'a' };
      }),
      true,
    );
    expect(d.Type).to.equal('Edited');
    expect(d.Fields).to.deep.equal([f('Deleted', 'Meta[owner]', 'ops', ''), f('Added', 'Meta[team]', '', 'a'), f('Edited', 'Priority', '50', '70')]);
  });

  it('datacenters are a set: order alone is no change; added and removed members make it Edited', () => {
    expect(
      jobDiff(
        base(),
        edit((j) => (j.Datacenters = ['dc1'])),
        true,
      ).Objects,
    ).to.equal(null);
    const two = jobDiff(
      edit((j) => (j.Datacenters = ['a', 'b'])),
      edit((j) => (j.Datacenters = ['b', 'a'])),
      true,
    );
    expect([two.Type, two.Objects]).to.deep.equal(['None', null]);
    const d = jobDiff(
      base(),
      edit((j) => (j.Datacenters = ['dc1', 'dc2'])),
      true,
    );
    expect(d.Objects).to.deep.equal([
      // Nomad's field order: by name, then old value ("" first).
      { Type: 'Added', Name: 'Datacenters', Fields: [f('Added', 'Datacenters', '', 'dc2'), f('None', 'Datacenters', 'dc1', 'dc1')], Objects: null },
    ]);
    const swapped = jobDiff(
      base(),
      edit((j) => (j.Datacenters = ['dc2'])),
      false,
    );
    expect(swapped.Objects).to.deep.equal([
      { Type: 'Edited', Name: 'Datacenters', Fields: [f('Added', 'Datacenters', '', 'dc2'), f('Deleted', 'Datacenters', 'dc1', '')], Objects: null },
    ]);
  });

  it('a changed constraint is a Deleted and an Added one (matched by its text), Added sorted first', () => {
    const c = (r: string) => [{ LTarget: '${attr.kernel.name}', RTarget: r, Operand: '=' }];
    const d = jobDiff(
      edit((j) => (j.Constraints = c('linux'))),
      edit((j) => (j.Constraints = c('darwin'))),
      true,
    );
    expect(d.Objects).to.deep.equal([
      {
        Type: 'Added',
        Name: 'Constraint',
        Fields: [f('Added', 'LTarget', '', '${attr.kernel.name}'), f('Added', 'Operand', '', '='), f('Added', 'RTarget', '', 'darwin')],
        Objects: null,
      },
      {
        Type: 'Deleted',
        Name: 'Constraint',
        Fields: [f('Deleted', 'LTarget', '${attr.kernel.name}', ''), f('Deleted', 'Operand', '=', ''), f('Deleted', 'RTarget', 'linux', '')],
        Objects: null,
      },
    ]);
  });

  it('a primitive block lists its unchanged fields as None when contextual, only its changes when not', () => {
    const next = edit((j) => (web(j).RestartPolicy.Attempts = 5));
    expect(group(jobDiff(base(), next, true)).Objects).to.deep.equal([
      {
        Type: 'Edited',
        Name: 'RestartPolicy',
        Fields: [
          f('Edited', 'Attempts', '2', '5'),
          f('None', 'Delay', '15000000000', '15000000000'),
          f('None', 'Interval', '1800000000000', '1800000000000'),
          f('None', 'Mode', 'fail', 'fail'),
          f('None', 'RenderTemplates', 'false', 'false'),
        ],
        Objects: null,
      },
    ]);
    expect(group(jobDiff(base(), next, false)).Objects![0]!.Fields).to.deep.equal([f('Edited', 'Attempts', '2', '5')]);
  });

  it('a group’s update block ignores Stagger; its Count and ShutdownDelay (nil as "") are fields', () => {
    const stagger = jobDiff(
      base(),
      edit((j) => (web(j).Update.Stagger = 1)),
      true,
    );
    expect(group(stagger).Objects).to.equal(null);
    const d = jobDiff(
      base(),
      edit((j) => {
        web(j).Count = 3;
        web(j).ShutdownDelay = 5000000000;
      }),
      true,
    );
    expect(group(d).Fields).to.deep.equal([f('Edited', 'Count', '1', '3'), f('Added', 'ShutdownDelay', '', '5000000000')]);
  });

  it('a task’s fields: Env by key, durations in nanoseconds; its resources a block', () => {
    const d = jobDiff(
      base(),
      edit((j) => {
        server(j).Env = { A: '2' };
        server(j).KillTimeout = 9000000000;
        server(j).Resources.MemoryMB = 128;
      }),
      false,
    );
    expect(task(d).Fields).to.deep.equal([f('Edited', 'Env[A]', '1', '2'), f('Edited', 'KillTimeout', '5000000000', '9000000000')]);
    expect(task(d).Objects).to.deep.equal([{ Type: 'Edited', Name: 'Resources', Fields: [f('Edited', 'MemoryMB', '64', '128')], Objects: null }]);
  });

  it('an added task and an added group are Added inside an Edited job; a removed group is Deleted', () => {
    const d = jobDiff(
      base(),
      edit((j) => {
        web(j).Tasks.push({ Name: 'sidecar', Driver: 'raw_exec', Config: { command: '/bin/true' } });
        j.TaskGroups.push({ Name: 'api', Count: 1, Tasks: [{ Name: 'a', Driver: 'raw_exec' }] });
      }),
      true,
    );
    expect(d.TaskGroups!.map((g) => `${g.Type} ${g.Name}`)).to.deep.equal(['Added api', 'Edited web']);
    expect(group(d).Tasks!.map((t) => `${t.Type} ${t.Name}`)).to.deep.equal(['None server', 'Added sidecar']);
    const gone = jobDiff(
      edit((j) => j.TaskGroups.push({ Name: 'old', Count: 1, Tasks: [] })),
      base(),
      true,
    );
    expect(gone.TaskGroups!.map((g) => `${g.Type} ${g.Name}`)).to.deep.equal(['Deleted old', 'None web']);
    expect(group(gone, 'old').Fields![0]).to.deep.equal(f('Deleted', 'Count', '1', ''));
  });
});
