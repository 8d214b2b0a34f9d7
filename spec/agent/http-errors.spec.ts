/**
 * The HTTP edge's error table (`agent/http/errors.ts`): each domain error the agent throws is
 * answered with Nomad's status and exact text; an ApiError as it says; any other BerthError 400
 * and anything else 500. The behaviour specs (http, periodic, dispatch, deployment) hold the same
 * texts over real HTTP; this one pins the table row by row.
 */
import { expect } from 'chai';
import { BerthError } from '../../model/errors.ts';
import * as E from '../../agent/errors.ts';
import { ApiError, ERROR_TABLE, httpAnswer } from '../../agent/http/errors.ts';
import { DispatchError } from '../../agent/jobs/dispatch.ts';

describe('agent HTTP error table', () => {
  const cases: Array<[Error, number, string]> = [
    [new E.JobNotFoundError('web'), 404, 'job not found'],
    [new E.AllocationNotFoundError('a1'), 404, 'alloc not found'],
    [new E.EvalNotFoundError('e1'), 404, 'eval not found'],
    [new E.DeploymentNotFoundError('d1'), 404, 'deployment not found'],
    [new E.NodeNotFoundError('n1'), 404, 'node not found'],
    [new E.InvalidJobError('Task "t": the task needs a driver'), 400, 'Task "t": the task needs a driver'],
    [new E.InvalidPeriodicError('Invalid periodic job: bad'), 400, 'Invalid periodic job: bad'],
    [new E.EnforceIndexError('web', 0, 'exists'), 400, 'Enforcing job modify index 0: job already exists'],
    [new E.EnforceIndexError('web', 5, 'conflict', 9), 400, 'Enforcing job modify index 5: job exists with conflicting job modify index: 9'],
    [new E.EnforceIndexError('web', 5, 'missing'), 400, 'Enforcing job modify index 5: job does not exist'],
    [new E.JobStoppedError('greet', 'dispatch'), 400, 'Specified job "greet" is stopped'],
    [new E.JobStoppedError('nightly', 'periodic-force'), 400, 'Job is stopped'],
    [new E.JobNotPeriodicError('web'), 400, 'Job is not periodic'],
    [new E.PeriodicLaunchExistsError('nightly'), 409, 'a launch of job nightly in this second exists already'],
    [new E.ScaleGroupNotFoundError('web', 'cache'), 400, 'Task group "cache" specified for scaling does not exist in job'],
    [new E.DeploymentActionError('d1', "can't pause terminal deployment"), 400, "can't pause terminal deployment"],
    [new DispatchError('missing payload'), 400, 'missing payload'],
  ];

  it('answers each domain error with Nomad status and text', () => {
    for (const [err, status, text] of cases) expect(httpAnswer(err), err.constructor.name).to.deep.equal({ status, text });
  });

  it('has one row per error class, every domain error of agent/errors.ts among them, each exercised above', () => {
    const classes = ERROR_TABLE.map((r) => r.error);
    expect(new Set(classes).size).to.equal(classes.length);
    for (const c of classes)
      expect(
        cases.some(([e]) => e instanceof c),
        c.name,
      ).to.equal(true);
    // A domain error added without its row would be answered as a bare 400 in berth's own words.
    for (const c of Object.values(E)) expect(classes, c.name).to.include(c);
  });

  it('an ApiError as it says; another BerthError 400; anything else 500, with its message', () => {
    expect(httpAnswer(new ApiError(415, 'no'))).to.deep.equal({ status: 415, text: 'no' });
    expect(httpAnswer(new BerthError('bad input'))).to.deep.equal({ status: 400, text: 'bad input' });
    expect(httpAnswer(new Error('boom'))).to.deep.equal({ status: 500, text: 'boom' });
    expect(httpAnswer('odd')).to.deep.equal({ status: 500, text: 'odd' });
  });
});
