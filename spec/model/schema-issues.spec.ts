import { expect } from 'chai';
import type { z } from 'zod';
import { berthErrorMap, didYouMean, problemText, renderPath, unknownKeyProblem } from '../../model/schema/issues.ts';

describe('model: schema issue text (paths, did-you-mean, wording)', () => {
  it('renders paths: dotted names (hyphens allowed), [index], quoted odd keys cut at 40 characters, after a prefix', () => {
    const forty = '.'.repeat(40);
    const cases: Array<[PropertyKey[], string, string]> = [
      [[], '', '(root)'],
      [[], 'job', 'job'],
      [['a'], '', 'a'],
      [['a', 0, 'b'], '', 'a[0].b'],
      [['b'], 'job', 'job.b'],
      [[2], 'job.tasks', 'job.tasks[2]'],
      [['max-files', '$x_1'], '', 'max-files.$x_1'],
      [['1a'], 'p', 'p["1a"]'],
      [['a b'], 'p', 'p["a b"]'],
      [['-a'], 'p', 'p["-a"]'],
      [['a.'], 'p', 'p["a."]'],
      [[forty], 'p', `p[${JSON.stringify(forty)}]`],
      [[`${forty}!`], 'p', `p[${JSON.stringify(`${forty}...`)}]`],
      [[Symbol('s')], 'p', 'p["Symbol(s)"]'],
    ];
    for (const [parts, prefix, want] of cases) expect(renderPath(parts, prefix), want).to.equal(want);
    expect(renderPath(['a'])).to.equal('a');
  });

  it('suggests the key meant: same letters, a known misspelling, a near spelling, or a prefix', () => {
    const cases: Array<[string, string[], string | undefined]> = [
      // Case, underscores and hyphens do not matter.
      ['Memory_MB', ['cpu', 'memoryMB'], 'memoryMB'],
      ['memory-max-mb', ['memoryMB', 'memoryMaxMB'], 'memoryMaxMB'],
      // Misspellings edit distance does not catch (Nomad's HCL names, long words).
      ['environment', ['user', 'env'], 'env'],
      ['mem', ['cpu', 'memoryMB'], 'memoryMB'],
      ['kill_timeout', ['killSignal', 'killTimeoutMs'], 'killTimeoutMs'],
      ['restart', ['reschedulePolicy', 'restartPolicy'], 'restartPolicy'],
      ['groups', ['id', 'taskGroups'], 'taskGroups'],
      ['argv', ['command', 'args'], 'args'],
      ['disk', ['ephemeralDisk', 'meta'], 'ephemeralDisk'],
      ['service', ['name', 'services'], 'services'],
      // An exact (squashed) match wins over an alias.
      ['disk', ['ephemeralDisk', 'disk'], 'disk'],
      // Edit distance up to a third of the shorter word (at least 1); the first of equals wins.
      ['drver', ['name', 'driver'], 'driver'],
      ['dxivxr', ['driver'], 'driver'],
      ['dxxvxr', ['driver'], undefined],
      ['a', ['b'], 'b'],
      ['ab', ['cd'], undefined],
      ['cat', ['bat', 'hat'], 'bat'],
      ['abcdef', ['abcxyz', 'abcdxy'], 'abcdxy'],
      // The bound is a third of the shorter word: 5 letters allow 1 edit, even against 6.
      ['dxivr', ['driver'], undefined],
      // A prefix either way (the known key at least 3 letters when it is the shorter).
      ['hea', ['name', 'healthCheck'], 'healthCheck'],
      ['commandline', ['args', 'command'], 'command'],
      ['abcdefgh', ['ab'], undefined],
      ['cpuxyz', ['cpu'], 'cpu'],
      ['ab', [], undefined],
    ];
    for (const [key, known, want] of cases) expect(didYouMean(key, known), `${key} in ${known.join(',')}`).to.equal(want);
  });

  it('knows the misspellings people make of each key (Nomad HCL names, short forms)', () => {
    const ALIASES: Record<string, string[]> = {
      env: ['environment', 'enviroment', 'environ', 'envs', 'environmentvariables'],
      memoryMB: ['memory', 'mem', 'memorymb', 'memory_mb'],
      memoryMaxMB: ['memory_max', 'memorymax', 'memorymaxmb'],
      cpu: ['cpus', 'mhz'],
      args: ['arg', 'argv', 'arguments'],
      killTimeoutMs: ['kill_timeout', 'killtimeout', 'killTimeout'],
      restartPolicy: ['restart', 'restart_policy'],
      reschedulePolicy: ['reschedule'],
      ephemeralDisk: ['ephemeral_disk', 'disk'],
      taskGroups: ['groups', 'group', 'task_groups'],
      tasks: ['task'],
      shutdownDelayMs: ['shutdown_delay', 'shutdownDelay'],
      networks: ['network'],
      services: ['service'],
      artifacts: ['artifact'],
      checks: ['check'],
    };
    // Among unrelated keys, so only the alias can find it.
    const decoys = ['zz1', 'zz2', 'zz3'];
    for (const [key, aliases] of Object.entries(ALIASES)) for (const a of aliases) expect(didYouMean(a, [...decoys, key]), `${a} -> ${key}`).to.equal(key);
  });

  it('words an unknown key with the guess, else the known keys', () => {
    expect(unknownKeyProblem('drvier', ['name', 'driver'])).to.equal('unknown field "drvier" (did you mean "driver"?)');
    expect(unknownKeyProblem('zzzzzzzz', ['hook', 'sidecar'])).to.equal('unknown field "zzzzzzzz" (known: hook, sidecar)');
    expect(unknownKeyProblem('zzzzzzzz', [])).to.equal('unknown field "zzzzzzzz"');
  });

  it("rewords zod's issues in berth's words", () => {
    const iss = (o: Record<string, unknown>) => o as unknown as z.core.$ZodRawIssue;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ code: 'invalid_type', expected: 'string', input: undefined }, 'is required'],
      [{ code: 'invalid_type', expected: 'string', input: 1 }, 'must be a string'],
      [{ code: 'invalid_type', expected: 'number', input: 'x' }, 'must be a number'],
      [{ code: 'invalid_type', expected: 'int', input: 'x' }, 'must be an integer'],
      [{ code: 'invalid_type', expected: 'boolean', input: 'x' }, 'must be a boolean'],
      [{ code: 'invalid_type', expected: 'array', input: 'x' }, 'must be an array'],
      [{ code: 'invalid_type', expected: 'object', input: 'x' }, 'must be an object'],
      [{ code: 'invalid_type', expected: 'record', input: 'x' }, 'must be an object'],
      [{ code: 'invalid_type', expected: 'bigint', input: 'x' }, 'must be bigint'],
      [{ code: 'too_small', origin: 'array', minimum: 1 }, 'must be a non-empty array'],
      [{ code: 'too_small', origin: 'array', minimum: 2 }, 'must have at least 2 items'],
      [{ code: 'too_small', origin: 'string', minimum: 1 }, 'must not be empty'],
      [{ code: 'too_small', origin: 'number', minimum: 0 }, 'must not be negative'],
      [{ code: 'too_small', origin: 'number', minimum: -1 }, 'must be at least -1'],
      [{ code: 'too_big', origin: 'string', maximum: 5 }, 'must be at most 5 characters'],
      [{ code: 'too_big', origin: 'array', maximum: 1 }, 'must have at most 1 items'],
      [{ code: 'too_big', origin: 'number', maximum: 65535 }, 'must be at most 65535'],
      [{ code: 'invalid_value', values: ['a', 'b'] }, 'must be one of "a", "b"'],
      [{ code: 'invalid_union' }, 'has an invalid value'],
      [{ code: 'custom', message: 'a person can act on this' }, 'a person can act on this'],
      [{ code: 'custom' }, 'is invalid'],
    ];
    for (const [i, want] of cases) {
      expect(problemText(iss(i)), want).to.equal(want);
      expect(berthErrorMap(iss(i)), want).to.equal(want);
    }
  });
});
