import { expect } from 'chai';
import { completeReschedulePolicy, defaultReschedulePolicy } from '../../model/job-defaults.ts';
import { jsonValueProblems } from '../../model/json-value.ts';
import { isLoopbackAddress, normaliseHost } from '../../model/loopback.ts';
import { isUUID } from '../../model/names.ts';
import { completeRestartPolicy, defaultRestartPolicy } from '../../model/restart-defaults.ts';
import { driverConfigIssues } from '../../model/schema/driver-config.ts';
import { ARG_MAX, argStringProblem, envEntryBytes, MAX_ARG_STRLEN, MAX_EXACT_MB } from '../../model/schema/limits.ts';

describe('model: edges of the small helpers', () => {
  it("Nomad's default restart policy per job type, and a partial one completed over it", () => {
    const batch = { attempts: 3, intervalMs: 24 * 3600_000, delayMs: 15_000, mode: 'fail' };
    const service = { attempts: 2, intervalMs: 30 * 60_000, delayMs: 15_000, mode: 'fail' };
    expect(defaultRestartPolicy('batch')).to.deep.equal(batch);
    expect(defaultRestartPolicy('sysbatch')).to.deep.equal(batch);
    expect(defaultRestartPolicy('service')).to.deep.equal(service);
    expect(defaultRestartPolicy('system')).to.deep.equal(service);
    expect(completeRestartPolicy(defaultRestartPolicy('service'), { attempts: undefined, mode: 'delay' })).to.deep.equal({ ...service, mode: 'delay' });
    expect(completeRestartPolicy(defaultRestartPolicy('service'), undefined)).to.equal(undefined);
  });

  it("Nomad's default reschedule policy per job type, and a partial one completed over it", () => {
    const service = { attempts: 0, intervalMs: 0, delayMs: 30_000, delayFunction: 'exponential', maxDelayMs: 3_600_000, unlimited: true };
    const batch = { attempts: 1, intervalMs: 24 * 3_600_000, delayMs: 5000, delayFunction: 'constant', maxDelayMs: 0, unlimited: false };
    const none = { attempts: 0, intervalMs: 0, delayMs: 0, delayFunction: 'constant', maxDelayMs: 0, unlimited: false };
    expect(defaultReschedulePolicy('service')).to.deep.equal(service);
    expect(defaultReschedulePolicy('batch')).to.deep.equal(batch);
    expect(defaultReschedulePolicy('system')).to.equal(undefined);
    expect(defaultReschedulePolicy('sysbatch')).to.equal(undefined);
    expect(completeReschedulePolicy('service', undefined)).to.deep.equal(service);
    expect(completeReschedulePolicy('system', undefined)).to.equal(undefined);
    // Unset ('' or undefined, as Nomad JSON that was not canonicalised has them) keeps the default.
    expect(completeReschedulePolicy('service', { attempts: 5, delayFunction: '' as never, delayMs: undefined })).to.deep.equal({ ...service, attempts: 5 });
    expect(completeReschedulePolicy('batch', { unlimited: true })).to.deep.equal({ ...batch, unlimited: true });
    expect(completeReschedulePolicy('system', { attempts: 2 })).to.deep.equal({ ...none, attempts: 2 });
  });

  it('the kernel bounds on argv and envp: one string with its NUL, one KEY=value with its = and NUL', () => {
    expect(envEntryBytes('A', 'b')).to.equal(4);
    expect(envEntryBytes('É', '€')).to.equal(2 + 3 + 2);
    expect(argStringProblem('x'.repeat(MAX_ARG_STRLEN - 1), 'the entry')).to.equal(undefined);
    expect(argStringProblem('x'.repeat(MAX_ARG_STRLEN), 'the entry')).to.equal(
      `the entry is ${MAX_ARG_STRLEN + 1} bytes, past the kernel's ${MAX_ARG_STRLEN}-byte limit for one argument (MAX_ARG_STRLEN)`,
    );
    expect(argStringProblem('a\0b', 'the key')).to.equal('the key must not contain NUL');
    expect([MAX_ARG_STRLEN, ARG_MAX, MAX_EXACT_MB]).to.deep.equal([131072, 2097152, 2 ** 33]);
  });

  it("driverConfigIssues: a shipped driver's config problems, none for a driver berth does not ship", () => {
    expect(driverConfigIssues('custom', { anything: 1 })).to.deep.equal([]);
    expect(driverConfigIssues('raw_exec', undefined)).to.deep.equal(['command: missing required config "command" (a non-empty string)']);
    expect(driverConfigIssues('mock_driver', { exec_command: 'x' })).to.deep.equal(['exec_command: must be a block']);
    expect(driverConfigIssues('mock_driver', { run_for: '1s' })).to.deep.equal([]);
  });

  it('a host with a path, query, fragment, user or backslash is not a host (not loopback)', () => {
    for (const h of ['127.0.0.1/x', 'localhost?x', 'localhost#x', 'evil@127.0.0.1', '127.0.0.1\\x', 'local host']) {
      expect(normaliseHost(h), h).to.equal(undefined);
      expect(isLoopbackAddress(h), h).to.equal(false);
    }
  });

  it('isUUID: only a string is a UUID, even one that prints as one', () => {
    const text = '0123abcd-0123-4567-89ab-abcdef012345';
    expect(isUUID(text)).to.equal(true);
    expect(isUUID({ length: 36, toString: () => text })).to.equal(false);
  });

  it('jsonValueProblems: 20 problems at most, even from one array or object', () => {
    const getters = (n: number) => {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) Object.defineProperty(o, `k${i}`, { enumerable: true, get: () => 1 });
      return o;
    };
    const arr: unknown[] = [];
    for (let i = 0; i < 25; i++) Object.defineProperty(arr, i, { enumerable: true, get: () => 1 });
    expect(jsonValueProblems(getters(25))).to.have.length(20);
    expect(jsonValueProblems(arr)).to.have.length(20);
    expect(jsonValueProblems(getters(20))).to.have.length(20);
  });
});
