import { expect } from 'chai';
import {
  decideRestart,
  defaultRestartPolicy,
  newRestartTracker,
  effectivePolicy,
  restartsOnSuccess,
  ReasonDelay,
  ReasonNoRestartsAllowed,
  ReasonTerminatedSuccessfully,
  ReasonUnrecoverableError,
  ReasonWithinPolicy,
  type RestartInput,
  type RestartSubject,
  type RestartTrackerState,
} from '../../../machines/policy/restarts.ts';

const policy = (over: Partial<RestartSubject['policy']> = {}): RestartSubject['policy'] => ({
  attempts: 2,
  intervalMs: 60_000,
  delayMs: 1000,
  mode: 'fail',
  ...over,
});
const fresh: RestartTrackerState = { count: 0, intervalStart: 0 };
const fail: RestartInput = { kind: 'exit', exitCode: 1, signal: 0 };
const ok: RestartInput = { kind: 'exit', exitCode: 0, signal: 0 };

describe('restart tracker policy', () => {
  const table: Array<{
    name: string;
    subject: RestartSubject;
    tracker?: RestartTrackerState;
    input: RestartInput;
    now?: number;
    want: string;
    reason?: string;
    delay?: [number, number];
  }> = [
    { name: 'killed wins', subject: { policy: policy(), onSuccess: true }, input: { kind: 'killed' }, want: 'Killed' },
    {
      name: 'triggered restart has no delay',
      subject: { policy: policy(), onSuccess: true },
      input: { kind: 'restartTriggered', failure: false },
      want: 'Restarting',
      delay: [0, 0],
    },
    {
      name: 'zero attempts, failure',
      subject: { policy: policy({ attempts: 0 }), onSuccess: true },
      input: fail,
      want: 'Not Restarting',
      reason: ReasonNoRestartsAllowed,
    },
    {
      name: 'zero attempts, success without onSuccess',
      subject: { policy: policy({ attempts: 0 }), onSuccess: false },
      input: ok,
      want: 'Terminated',
      reason: ReasonNoRestartsAllowed,
    },
    {
      name: 'unrecoverable start error',
      subject: { policy: policy(), onSuccess: true },
      input: { kind: 'startError', recoverable: false, message: 'x' },
      want: 'Not Restarting',
      reason: ReasonUnrecoverableError,
    },
    {
      name: 'recoverable start error restarts',
      subject: { policy: policy(), onSuccess: true },
      input: { kind: 'startError', recoverable: true, message: 'x' },
      want: 'Restarting',
      reason: ReasonWithinPolicy,
      delay: [1000, 1250],
    },
    { name: 'batch success is terminal', subject: { policy: policy(), onSuccess: false }, input: ok, want: 'Terminated', reason: ReasonTerminatedSuccessfully },
    { name: 'service success restarts', subject: { policy: policy(), onSuccess: true }, input: ok, want: 'Restarting', delay: [1000, 1250] },
    {
      name: 'within policy: delay with up to 25% jitter',
      subject: { policy: policy(), onSuccess: true },
      input: fail,
      want: 'Restarting',
      reason: ReasonWithinPolicy,
      delay: [1000, 1250],
    },
    {
      name: 'attempts exceeded in fail mode',
      subject: { policy: policy(), onSuccess: true },
      tracker: { count: 2, intervalStart: 100 },
      now: 1000,
      input: fail,
      want: 'Not Restarting',
      reason: 'Exceeded allowed attempts 2 in interval 1m0s and mode is "fail"',
    },
    {
      name: 'attempts exceeded in delay mode waits out the interval',
      subject: { policy: policy({ mode: 'delay' }), onSuccess: true },
      tracker: { count: 2, intervalStart: 100 },
      now: 10_100,
      input: fail,
      want: 'Restarting',
      reason: ReasonDelay,
      delay: [50_000, 50_000],
    },
    {
      name: 'an elapsed interval resets the count',
      subject: { policy: policy(), onSuccess: true },
      tracker: { count: 2, intervalStart: 100 },
      now: 100 + 60_001,
      input: fail,
      want: 'Restarting',
      reason: ReasonWithinPolicy,
    },
  ];
  for (const c of table) {
    it(c.name, () => {
      for (const r of [0, 0.5, 0.999]) {
        const { decision } = decideRestart(c.subject, c.tracker ?? fresh, c.input, c.now ?? 1000, () => r);
        expect(decision.state).to.equal(c.want);
        if (c.reason) expect((decision as { reason: string }).reason).to.equal(c.reason);
        if (c.delay) {
          const d = (decision as { delayMs: number }).delayMs;
          expect(d).to.be.at.least(c.delay[0]);
          expect(d).to.be.at.most(c.delay[1]);
        }
      }
    });
  }

  it('counts attempts across decisions with an injected clock', () => {
    const subject = { policy: policy({ attempts: 2 }), onSuccess: true };
    let t = fresh;
    const states: string[] = [];
    for (const now of [1000, 2000, 3000]) {
      const { decision, next } = decideRestart(subject, t, fail, now, () => 0);
      states.push(decision.state);
      t = next;
    }
    expect(states).to.deep.equal(['Restarting', 'Restarting', 'Not Restarting']);
  });

  it('onSuccess follows Nomad: batch, lifecycle and poststop tasks', () => {
    expect(restartsOnSuccess('service', {})).to.equal(true);
    expect(restartsOnSuccess('batch', {})).to.equal(false);
    expect(restartsOnSuccess('sysbatch', {})).to.equal(false);
    expect(restartsOnSuccess('service', { lifecycle: { hook: 'prestart', sidecar: true } })).to.equal(true);
    expect(restartsOnSuccess('service', { lifecycle: { hook: 'poststart' } })).to.equal(false);
    expect(restartsOnSuccess('service', { lifecycle: { hook: 'poststop', sidecar: true } })).to.equal(false);
  });

  it('task policy overrides the group, defaults by job type', () => {
    const g = policy({ attempts: 9 });
    expect(effectivePolicy('service', { restartPolicy: policy({ attempts: 1 }) }, g).attempts).to.equal(1);
    expect(effectivePolicy('service', {}, g).attempts).to.equal(9);
    expect(effectivePolicy('batch', {})).to.deep.equal(defaultRestartPolicy('batch'));
    expect(defaultRestartPolicy('service')).to.deep.equal({ attempts: 2, intervalMs: 1_800_000, delayMs: 15_000, mode: 'fail' });
  });
});

describe("restart tracker: the interval starts when the tracker is made (Nomad's NewRestartTracker)", () => {
  it('failures at 29, 31 and 32 min with a 30 min interval and 2 attempts all restart', () => {
    const subject: RestartSubject = { policy: policy({ attempts: 2, intervalMs: 30 * 60_000 }), onSuccess: true };
    let tracker = newRestartTracker(0);
    const states: string[] = [];
    for (const min of [29, 31, 32]) {
      const { decision, next } = decideRestart(subject, tracker, fail, min * 60_000, () => 0);
      states.push(decision.state);
      tracker = next;
    }
    expect(states).to.deep.equal(['Restarting', 'Restarting', 'Restarting']);
    // A third failure inside the new interval exceeds it.
    expect(decideRestart(subject, tracker, fail, 33 * 60_000, () => 0).decision.state).to.equal('Not Restarting');
  });
});
