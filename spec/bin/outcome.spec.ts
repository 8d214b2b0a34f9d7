import { expect } from 'chai';
import { runExitCode, taskExitCode } from '../../bin/cli/run/outcome.ts';
import type { Allocation } from '../../model/types.ts';

/** A one-task batch alloc whose task ended with `details` on its last Terminated event. */
const ended = (details: Record<string, string>, clientStatus: Allocation['clientStatus'] = 'failed', type = 'batch') =>
  ({
    id: 'a',
    taskGroup: 'g',
    clientStatus,
    job: { type, taskGroups: [{ name: 'g', tasks: [{ name: 't' }] }] },
    taskStates: {
      t: {
        state: 'dead',
        events: [
          { type: 'Terminated', time: 1, details: { exit_code: '9' } },
          { type: 'Terminated', time: 2, details },
        ],
      },
    },
  }) as unknown as Allocation;

describe("berth run's exit code", () => {
  it('a task a signal ended exits 128 + the signal, by number or by name, as a shell reports it', () => {
    expect(taskExitCode(ended({ exit_code: '0', signal: '9' }), 't')).to.equal(137);
    expect(taskExitCode(ended({ exit_code: '0', signal: 'SIGTERM' }), 't')).to.equal(143);
    expect(runExitCode(ended({ exit_code: '0', signal: '15' }), undefined)).to.equal(143);
  });

  it("a task's own exit code from its last Terminated event; one out of range is 1", () => {
    expect(runExitCode(ended({ exit_code: '3', signal: '0' }), undefined)).to.equal(3);
    expect(runExitCode(ended({ exit_code: '300' }), undefined)).to.equal(1);
    expect(taskExitCode({ ...ended({}), taskStates: {} } as Allocation, 't')).to.equal(undefined);
  });

  it('stopped by Ctrl-C or SIGTERM: 130 or 143 whatever the task did; a service alloc: 0 complete, 1 failed', () => {
    expect(runExitCode(ended({ exit_code: '3' }), 'SIGINT')).to.equal(130);
    expect(runExitCode(ended({ exit_code: '3' }), 'SIGTERM')).to.equal(143);
    expect(runExitCode(ended({ exit_code: '3' }, 'complete', 'service'), undefined)).to.equal(0);
    expect(runExitCode(ended({ exit_code: '3' }, 'failed', 'service'), undefined)).to.equal(1);
  });

  it('a sysbatch task counts as batch; an unknown signal name or a code that is no exit status falls back', () => {
    expect(runExitCode(ended({ exit_code: '4' }, 'failed', 'sysbatch'), undefined)).to.equal(4);
    expect(taskExitCode(ended({ exit_code: '5', signal: 'SIGNOPE' }), 't')).to.equal(5);
    expect(taskExitCode(ended({ exit_code: '-1' }), 't')).to.equal(1);
    expect(taskExitCode(ended({ exit_code: '2.5' }), 't')).to.equal(1);
    expect(taskExitCode(ended({}), 't')).to.equal(0);
  });

  it('a batch alloc of two tasks, or one whose task never ended, exits by its client status', () => {
    const two = ended({ exit_code: '3' }, 'complete');
    (two.job.taskGroups[0]!.tasks as unknown[]).push({ name: 'u' });
    expect(runExitCode(two, undefined)).to.equal(0);
    const never = {
      ...ended({ exit_code: '3' }, 'failed'),
      taskStates: { t: { state: 'dead', events: [{ type: 'Started', time: 1, details: {} }] } },
    } as unknown as Allocation;
    expect(runExitCode(never, undefined)).to.equal(1);
    expect(runExitCode({ ...never, clientStatus: 'complete' } as Allocation, undefined)).to.equal(0);
  });
});
