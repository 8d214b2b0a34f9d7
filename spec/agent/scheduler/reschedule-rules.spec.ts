// Nomad's reschedule rules, one table each: LastEventTime, NextDelay (constant, exponential,
// fibonacci, the max_delay ceiling and its reset after a quiet spell), NextRescheduleTime
// (attempts within the interval, unlimited, who qualifies) and UpdateRescheduleTracker (the
// events the replacement carries).
import { expect } from 'chai';
import type { Allocation, ReschedulePolicy, RescheduleEvent } from '../../../index.ts';
import { lastEventTime, nextDelay, nextRescheduleTime, reschedulePolicyOf, rescheduleTrackerFor } from '../../../agent/scheduler/reschedule.ts';
import { job } from './support.ts';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const T = 100 * H; // when the alloc failed

const policy = (over: Partial<ReschedulePolicy> = {}): ReschedulePolicy => ({
  attempts: 2,
  intervalMs: H,
  delayMs: 30 * S,
  delayFunction: 'exponential',
  maxDelayMs: H,
  unlimited: false,
  ...over,
});
const ev = (rescheduleTime: number, delayMs = 30 * S, prevAllocId = 'p'): RescheduleEvent => ({ rescheduleTime, prevAllocId, prevNodeId: 'node-1', delayMs });

/** A failed alloc of `web` (groups g and h), with `p` as group g's reschedule policy. */
function failed(p: ReschedulePolicy | undefined, over: Partial<Allocation> = {}, events?: RescheduleEvent[]): Allocation {
  const j = job('web', { group: { reschedulePolicy: p } });
  j.taskGroups.push({ ...structuredClone(j.taskGroups[0]!), name: 'h', reschedulePolicy: policy({ attempts: 9 }) });
  return {
    id: 'a1',
    nodeId: 'node-1',
    jobId: 'web',
    taskGroup: 'g',
    job: j,
    desiredStatus: 'run',
    clientStatus: 'failed',
    taskStates: { t: { state: 'dead', failed: true, restarts: 0, finishedAt: T, events: [] } },
    modifyTime: T - H,
    rescheduleTracker: events ? { events } : undefined,
    ...over,
  } as Allocation;
}

describe('scheduler: reschedule rules', () => {
  describe('the policy is the alloc’s own group’s', () => {
    it('group g', () => expect(reschedulePolicyOf(failed(policy({ attempts: 3 })))?.attempts).to.equal(3));
    it('group h', () => expect(reschedulePolicyOf(failed(policy(), { taskGroup: 'h' }))?.attempts).to.equal(9));
    it('a group the job no longer has: none', () => expect(reschedulePolicyOf(failed(policy(), { taskGroup: 'gone' }))).to.equal(undefined));
  });

  describe('LastEventTime: the latest task finish, else the last modify time', () => {
    const state = (finishedAt?: number) => ({ state: 'dead' as const, failed: true, restarts: 0, finishedAt, events: [] });
    const cases: Array<[string, Partial<Allocation>, number]> = [
      ['the latest of the tasks', { taskStates: { a: state(100), b: state(300), c: state(200) } }, 300],
      ['a task not finished does not count', { taskStates: { a: state(300), b: state(undefined) } }, 300],
      ['no task finished: the modify time', { taskStates: { a: state(undefined) }, modifyTime: 50 }, 50],
      ['no tasks: the modify time', { taskStates: undefined, modifyTime: 50 }, 50],
      ['nothing at all: 0', { taskStates: undefined, modifyTime: undefined }, 0],
    ];
    for (const [name, over, time] of cases) it(name, () => expect(lastEventTime(failed(policy(), over))).to.equal(time));
  });

  describe('NextDelay', () => {
    // [name, policy, past events, delay]
    const cases: Array<[string, Partial<ReschedulePolicy>, RescheduleEvent[], number]> = [
      ['the first reschedule: the base delay', {}, [], 30 * S],
      ['constant stays the base', { delayFunction: 'constant' }, [ev(T - M, 30 * S)], 30 * S],
      ['constant is never capped', { delayFunction: 'constant', delayMs: 2 * H }, [ev(T - M, 2 * H)], 2 * H],
      ['exponential doubles the last', {}, [ev(T - M, 30 * S)], 60 * S],
      ['exponential up to the ceiling', {}, [ev(T - M, 40 * M)], H],
      ['at the ceiling, a quiet spell of the ceiling is not yet long', {}, [ev(T - H, 40 * M)], H],
      ['at the ceiling, a longer quiet spell starts over', {}, [ev(T - H - 1, 40 * M)], 30 * S],
      ['exactly the ceiling is not past it: no reset', {}, [ev(T - 2 * H, 30 * M)], H],
      ['no ceiling (0)', { maxDelayMs: 0 }, [ev(T - M, 40 * M)], 80 * M],
      ['fibonacci: one event, the base', { delayFunction: 'fibonacci' }, [ev(T - M, 30 * S)], 30 * S],
      ['fibonacci: the sum of the last two', { delayFunction: 'fibonacci' }, [ev(T - 2 * M, 30 * S), ev(T - M, 60 * S)], 90 * S],
      ['fibonacci after a reset starts over', { delayFunction: 'fibonacci' }, [ev(T - 2 * H, H), ev(T - M, 30 * S)], 30 * S],
      ['fibonacci at the ceiling without a reset', { delayFunction: 'fibonacci' }, [ev(T - 2 * M, H), ev(T - M, 45 * S)], H],
    ];
    for (const [name, p, events, delay] of cases) it(name, () => expect(nextDelay(failed(policy(p), {}, events), policy(p))).to.equal(delay));
  });

  describe('NextRescheduleTime', () => {
    // [name, policy, alloc changes, past events, result]
    const no = { time: 0, eligible: false };
    const cases: Array<[string, ReschedulePolicy | undefined, Partial<Allocation>, RescheduleEvent[] | undefined, { time: number; eligible: boolean }]> = [
      ['no policy: never', undefined, {}, undefined, no],
      ['attempts 0: never', policy({ attempts: 0 }), {}, undefined, no],
      [
        'attempts 0, unlimited: yes',
        policy({ attempts: 0, unlimited: true }),
        {},
        [ev(T - M), ev(T - 2 * M), ev(T - 3 * M)],
        { time: T + 60 * S, eligible: true },
      ],
      ['negative attempts (Nomad refuses them): never eligible', policy({ attempts: -1 }), {}, undefined, { time: T + 30 * S, eligible: false }],
      ['desired to stop: never', policy(), { desiredStatus: 'stop' }, undefined, no],
      ['complete: never', policy(), { clientStatus: 'complete' }, undefined, no],
      ['running: never', policy(), { clientStatus: 'running' }, undefined, no],
      ['lost: yes', policy(), { clientStatus: 'lost' }, undefined, { time: T + 30 * S, eligible: true }],
      ['no fail time: never', policy(), { taskStates: undefined, modifyTime: undefined }, undefined, no],
      ['the first failure: after the base delay', policy(), {}, undefined, { time: T + 30 * S, eligible: true }],
      ['one attempt of two in the interval', policy(), {}, [ev(T - 10 * M)], { time: T + 60 * S, eligible: true }],
      ['two attempts of two in the interval', policy(), {}, [ev(T - 20 * M), ev(T - 10 * M)], { time: T + 60 * S, eligible: false }],
      ['an attempt exactly one interval ago no longer counts', policy(), {}, [ev(T - H), ev(T - 10 * M)], { time: T + 60 * S, eligible: true }],
      ['a delay as long as the interval: not eligible', policy({ maxDelayMs: 2 * H }), {}, [ev(T - 10 * M, 30 * M)], { time: T + H, eligible: false }],
    ];
    for (const [name, p, over, events, result] of cases) it(name, () => expect(nextRescheduleTime(failed(p, over, events))).to.deep.equal(result));
  });

  describe('UpdateRescheduleTracker: what the replacement carries', () => {
    const now = T + M;
    const mine = (delayMs: number) => ({ rescheduleTime: now, prevAllocId: 'a1', prevNodeId: 'node-1', delayMs });
    // [name, policy, past events, events carried]
    const cases: Array<[string, ReschedulePolicy | undefined, RescheduleEvent[] | undefined, RescheduleEvent[]]> = [
      ['the first: one event with the base delay', policy(), undefined, [mine(30 * S)]],
      [
        'attempts: the events within the interval (inclusive), and this one',
        policy(),
        [ev(now - 2 * H, 30 * S, 'x'), ev(now - H, 30 * S, 'y'), ev(now - 10 * M, 30 * S, 'z')],
        [ev(now - H, 30 * S, 'y'), ev(now - 10 * M, 30 * S, 'z'), mine(60 * S)],
      ],
      ['attempts with no interval: none of the past', policy({ intervalMs: 0 }), [ev(now - S)], [mine(60 * S)]],
      ['attempts with no interval: not even one made this very ms', policy({ intervalMs: 0 }), [ev(now)], [mine(60 * S)]],
      [
        'unlimited: the last five, however old',
        policy({ attempts: 0, unlimited: true, delayFunction: 'constant' }),
        [1, 2, 3, 4, 5, 6, 7].map((i) => ev(i * S, 30 * S, `e${i}`)),
        [3, 4, 5, 6, 7].map((i) => ev(i * S, 30 * S, `e${i}`)).concat(mine(30 * S)),
      ],
      [
        'no policy: the last five, no delay',
        undefined,
        [1, 2, 3, 4, 5, 6].map((i) => ev(i * S, 30 * S, `e${i}`)),
        [2, 3, 4, 5, 6].map((i) => ev(i * S, 30 * S, `e${i}`)).concat(mine(0)),
      ],
    ];
    for (const [name, p, events, carried] of cases) it(name, () => expect(rescheduleTrackerFor(failed(p, {}, events), now).events).to.deep.equal(carried));
  });
});
