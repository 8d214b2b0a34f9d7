/**
 * The deployment chart (`deployment-<id>`, what the viewer shows of each rollout), driven with
 * `createActor` as the watchers drive it: each commit of the record is one `deployment.updated`.
 * Running and paused follow the record's status and counts; each end (successful, failed,
 * cancelled) is final from either state.
 */
import { expect } from 'chai';
import { createActor } from 'xstate';
import { deploymentMachine, type DeploymentUpdated } from '../../../agent/deploy/watcher-machine.ts';

const INPUT = { deploymentId: 'd1', jobId: 'web', jobVersion: 3, desiredTotal: 4, placedAllocs: 1, healthyAllocs: 0, unhealthyAllocs: 0 };

/** One commit of the record: `status` with counts that tell each commit apart. */
const updated = (status: DeploymentUpdated['status'], n: number): DeploymentUpdated => ({
  type: 'deployment.updated',
  status,
  statusDescription: `${status} ${n}`,
  desiredTotal: 4,
  placedAllocs: n,
  healthyAllocs: n,
  unhealthyAllocs: 0,
});

/** A started actor taken through `statuses` in turn. */
function driven(...statuses: DeploymentUpdated['status'][]) {
  const actor = createActor(deploymentMachine, { input: INPUT }).start();
  statuses.forEach((s, i) => actor.send(updated(s, i + 1)));
  return actor;
}

describe('agent deployments: the deployment chart', () => {
  it('starts running with its input counts and Nomad’s running description', () => {
    const snap = driven().getSnapshot();
    expect(snap.value).to.equal('running');
    expect(snap.context).to.deep.equal({ ...INPUT, statusDescription: 'Deployment is running' });
  });

  it('running: a running commit updates the counts; each end is final with the last counts', () => {
    const counted = driven('running', 'running').getSnapshot();
    expect([counted.value, counted.status, counted.context.healthyAllocs, counted.context.statusDescription]).to.deep.equal([
      'running',
      'active',
      2,
      'running 2',
    ]);
    for (const end of ['successful', 'failed', 'cancelled'] as const) {
      const snap = driven('running', end).getSnapshot();
      expect([snap.value, snap.status, snap.context.healthyAllocs, snap.context.statusDescription], end).to.deep.equal([end, 'done', 2, `${end} 2`]);
    }
  });

  it('paused: another paused commit only counts; resumed it runs again; each end is final from paused too', () => {
    const still = driven('paused', 'paused').getSnapshot();
    expect([still.value, still.status, still.context.placedAllocs, still.context.statusDescription]).to.deep.equal(['paused', 'active', 2, 'paused 2']);
    const resumed = driven('paused', 'running').getSnapshot();
    expect([resumed.value, resumed.context.placedAllocs]).to.deep.equal(['running', 2]);
    for (const end of ['successful', 'failed', 'cancelled'] as const) {
      const snap = driven('paused', end).getSnapshot();
      expect([snap.value, snap.status, snap.context.placedAllocs, snap.context.statusDescription], `paused then ${end}`).to.deep.equal([
        end,
        'done',
        2,
        `${end} 2`,
      ]);
    }
  });

  it('an ended deployment takes no more updates', () => {
    const actor = driven('failed');
    actor.send(updated('running', 9));
    expect([actor.getSnapshot().value, actor.getSnapshot().context.placedAllocs]).to.deep.equal(['failed', 1]);
  });
});
