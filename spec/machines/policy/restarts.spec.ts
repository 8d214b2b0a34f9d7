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

describe('restart tracker: success, windows, delays and messages', () => {
  it('success is an exit with code 0, signal 0 and no error: anything else is a failure', () => {
    const batch: RestartSubject = { policy: policy(), onSuccess: false };
    const at = (input: RestartInput) => decideRestart(batch, fresh, input, 1, () => 0).decision;
    expect(at(ok)).to.deep.include({ state: 'Terminated', reason: ReasonTerminatedSuccessfully });
    for (const failure of [
      { kind: 'exit', exitCode: 1, signal: 0 },
      { kind: 'exit', exitCode: 0, signal: 9 },
      { kind: 'exit', exitCode: 0, signal: 0, err: 'wait failed' },
      { kind: 'startError', recoverable: true, message: 'boom' },
      { kind: 'restartTriggered', failure: true },
    ] as RestartInput[])
      expect(at(failure), JSON.stringify(failure)).to.deep.include({ state: 'Restarting', reason: ReasonWithinPolicy });
    const none: RestartSubject = { policy: policy({ attempts: 0 }), onSuccess: false };
    expect(decideRestart(none, fresh, { kind: 'exit', exitCode: 0, signal: 15 }, 1).decision).to.deep.equal({
      state: 'Not Restarting',
      reason: ReasonNoRestartsAllowed,
    });
    expect(decideRestart({ policy: policy({ attempts: 0 }), onSuccess: true }, fresh, ok, 1).decision).to.deep.equal({
      state: 'Not Restarting',
      reason: ReasonNoRestartsAllowed,
    });
  });

  it('a triggered restart keeps the tracker and gives an empty reason', () => {
    const t = { count: 1, intervalStart: 5 };
    expect(decideRestart({ policy: policy(), onSuccess: true }, t, { kind: 'restartTriggered', failure: false }, 10)).to.deep.equal({
      decision: { state: 'Restarting', delayMs: 0, reason: '' },
      next: t,
    });
  });

  it('the interval resets only once strictly more than intervalMs has passed', () => {
    const subject: RestartSubject = { policy: policy({ attempts: 1, intervalMs: 1000, mode: 'fail' }), onSuccess: true };
    const t = { count: 1, intervalStart: 0 };
    expect(decideRestart(subject, t, fail, 1000).decision.state, 'exactly at the interval: same window').to.equal('Not Restarting');
    expect(decideRestart(subject, t, fail, 1001).next).to.deep.equal({ count: 1, intervalStart: 1001 });
  });

  it('delay 0 still jitters from a tiny base; the jitter is up to a quarter of the delay', () => {
    const zero: RestartSubject = { policy: policy({ delayMs: 0 }), onSuccess: true };
    const d = decideRestart(zero, fresh, fail, 1, () => 0.5).decision as { delayMs: number };
    expect(d.delayMs).to.be.greaterThan(0).and.below(1e-5);
    const one: RestartSubject = { policy: policy({ delayMs: 1000 }), onSuccess: true };
    expect((decideRestart(one, fresh, fail, 1, () => 0.999).decision as { delayMs: number }).delayMs).to.be.closeTo(1249.75, 1e-9);
  });

  it('the "fail" message prints the interval as Go does', () => {
    const msg = (intervalMs: number) =>
      (
        decideRestart({ policy: policy({ attempts: 1, intervalMs, mode: 'fail' }), onSuccess: true }, { count: 1, intervalStart: 0 }, fail, 1).decision as {
          reason: string;
        }
      ).reason;
    expect(msg(1_800_000)).to.equal('Exceeded allowed attempts 1 in interval 30m0s and mode is "fail"');
    expect(msg(5_400_000)).to.equal('Exceeded allowed attempts 1 in interval 1h30m0s and mode is "fail"');
    expect(msg(3_600_000)).to.equal('Exceeded allowed attempts 1 in interval 1h0m0s and mode is "fail"');
    expect(msg(90_000)).to.equal('Exceeded allowed attempts 1 in interval 1m30s and mode is "fail"');
    expect(msg(1500)).to.equal('Exceeded allowed attempts 1 in interval 1.5s and mode is "fail"');
  });
});
