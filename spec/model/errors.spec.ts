import { expect } from 'chai';
import {
  AllocDirNotBuiltError,
  AllocExistsError,
  AllocNotEligibleForGcError,
  AllocNotFoundError,
  AllocNotRunningError,
  BerthError,
  ClientShutdownError,
  DriverStartError,
  InvalidAllocationError,
  InvalidClientOptionError,
  InvalidTaskNameError,
  JobspecError,
  MissingActorError,
  MultiError,
  TaskNotFoundError,
  TaskNotRunningError,
  UnsupportedStanzaError,
  unsupportedText,
} from '../../model/errors.ts';

describe('model: named errors (the text a caller reads)', () => {
  it('each error says what went wrong in words a person can act on, and carries its class name', () => {
    const cases: Array<[BerthError, string, string]> = [
      [new InvalidAllocationError(['id: required', 'job: required']), 'InvalidAllocationError', 'invalid allocation: id: required; job: required'],
      [new InvalidTaskNameError('a/b', 'contains a slash'), 'InvalidTaskNameError', 'invalid task name "a/b": contains a slash'],
      [new AllocDirNotBuiltError('/x/y'), 'AllocDirNotBuiltError', 'unable to move to "/x/y" - alloc dir is not built'],
      [new MultiError('stopping', [new Error('one')]), 'MultiError', 'stopping: 1 error occurred:\n\t* one'],
      [new MultiError('stopping', [new Error('one'), new Error('two')]), 'MultiError', 'stopping: 2 errors occurred:\n\t* one\n\t* two'],
      [new TaskNotRunningError(), 'TaskNotRunningError', 'Task not running'],
      [new TaskNotFoundError('web'), 'TaskNotFoundError', 'Could not find task runner for task: web'],
      [new AllocNotFoundError('a1'), 'AllocNotFoundError', 'unknown allocation a1'],
      [
        new AllocNotEligibleForGcError('a1', 'not-terminal'),
        'AllocNotEligibleForGcError',
        'No such allocation on client, or allocation not eligible for GC: allocation a1 is not terminal',
      ],
      [
        new AllocNotEligibleForGcError('a2', 'in-use'),
        'AllocNotEligibleForGcError',
        'No such allocation on client, or allocation not eligible for GC: allocation a2 is still waited on by a replacement or its data is being copied',
      ],
      [new InvalidClientOptionError('dataDir', 'must be absolute'), 'InvalidClientOptionError', 'createClient: options.dataDir must be absolute'],
      [new ClientShutdownError(), 'ClientShutdownError', 'client is shut down'],
      [new AllocExistsError('a1'), 'AllocExistsError', 'allocation a1 is already running on this client; use updateAlloc'],
      [new AllocNotRunningError(), 'AllocNotRunningError', 'restart of an alloc that should not run'],
      [
        new MissingActorError('alloc', 'runTask'),
        'MissingActorError',
        'alloc chart: actor "runTask" was not provided; pass it with .provide({ actors: { runTask } })',
      ],
      [new JobspecError('bad value'), 'JobspecError', 'bad value'],
      [new JobspecError('bad value', { file: 'job.hcl' }), 'JobspecError', 'job.hcl: bad value'],
      [new JobspecError('bad value', { file: 'job.hcl', line: 3 }), 'JobspecError', 'job.hcl:3: bad value'],
      [new JobspecError('bad value', { file: 'job.hcl', line: 3, column: 7 }), 'JobspecError', 'job.hcl:3:7: bad value'],
      [new JobspecError('bad value', { line: 3, column: 7 }), 'JobspecError', 'bad value'],
      [
        new UnsupportedStanzaError([{ stanza: 'template', path: 'job.taskGroups[0].tasks[0].templates' }], ['count: too big']),
        'UnsupportedStanzaError',
        'invalid allocation: template is not supported by berth (job.taskGroups[0].tasks[0].templates); count: too big',
      ],
    ];
    for (const [err, name, message] of cases) {
      expect(err, name).to.be.instanceOf(BerthError);
      expect(err.name, message).to.equal(name);
      expect(err.message, name).to.equal(message);
    }
  });

  it('keeps the parts a caller branches on', () => {
    const inner = [new Error('a'), new Error('b')];
    expect(new MultiError('x', inner).errors).to.equal(inner);
    expect(new InvalidAllocationError(['p: q']).issues).to.deep.equal(['p: q']);
    expect(new InvalidTaskNameError('t', 'r').taskName).to.equal('t');
    expect(new DriverStartError('no binary').recoverable).to.equal(false);
    expect(new DriverStartError('busy', true).recoverable).to.equal(true);
    expect(new AllocNotEligibleForGcError('a1', 'in-use')).to.include({ allocId: 'a1', why: 'in-use' });
    expect(new InvalidClientOptionError('dataDir', 'x').option).to.equal('dataDir');
    expect(new MissingActorError('task', 'driver')).to.include({ machine: 'task', actor: 'driver' });

    const where = new JobspecError('bad', { file: 'f.hcl', line: 1, column: 2, path: 'job.name' });
    expect(where).to.include({ file: 'f.hcl', line: 1, column: 2, path: 'job.name' });
    expect(where.issues, 'one issue: the message itself').to.deep.equal(['bad']);
    expect(where.unsupported).to.deep.equal([]);
    const u = [{ stanza: 'vault', path: 'job.vault' }];
    const many = new JobspecError('2 problems', { issues: ['a: x', 'b: y'], unsupported: u });
    expect(many.issues).to.deep.equal(['a: x', 'b: y']);
    expect(many.unsupported).to.equal(u);

    const refused = new UnsupportedStanzaError(u);
    expect(refused).to.be.instanceOf(InvalidAllocationError);
    expect(refused.unsupported).to.equal(u);
    expect(refused.issues).to.deep.equal(['vault is not supported by berth (job.vault)']);
    expect(unsupportedText({ stanza: 'driver "docker"', path: 'job.taskGroups[0].tasks[0].driver' })).to.equal(
      'driver "docker" is not supported by berth (job.taskGroups[0].tasks[0].driver)',
    );
  });

  it('passes a cause through', () => {
    const cause = new Error('root');
    expect(new BerthError('wrapped', { cause }).cause).to.equal(cause);
  });
});
