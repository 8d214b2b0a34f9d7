/**
 * Property: any allocation, valid or mutated into something hostile (non-JSON values, deep
 * nesting, huge strings, bad task names, missing fields), goes through parseAllocation +
 * addAlloc + destroy either as a typed error with nothing on disk, or as a clean run that
 * leaves nothing on disk once destroyed (no alloc dir, no client/tasks/<id>, no mount).
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { mountsUnder } from '../../actors/allocdir/mounts.ts';
import { BerthError, InvalidAllocationError } from '../../model/errors.ts';
import { parseAllocation } from '../../model/parse.ts';
import type { Allocation } from '../../model/types.ts';
import { makeAlloc } from '../support/fixtures.ts';
import { useTempClients } from '../support/temp-client.ts';
import { propertyRuns, propertyTimeout } from './settings.ts';

const taskName = fc.oneof(
  { weight: 12, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_-]{0,12}$/) },
  { weight: 1, arbitrary: fc.string({ maxLength: 140, unit: 'binary' }) },
  { weight: 1, arbitrary: fc.constantFrom('alloc', '.', '..', 'a/b', 'a\\b', 'x'.repeat(300), 'x'.repeat(128), '', 'nul\0x', 'ok') },
);

const mockConfig = fc.record(
  {
    run_for: fc.constantFrom('0s', '5ms', '50ms', '30s', '30s', '30s', 'soon'),
    exit_code: fc.integer({ min: -1, max: 3 }),
    start_error: fc.constantFrom('boom', '', '', ''),
    extra: fc.jsonValue({ maxDepth: 3 }),
  },
  { requiredKeys: ['run_for'] },
);

/** A value JSON cannot carry, or one past the bounds. */
const hostileValue = fc.constantFrom<() => unknown>(
  () => 10n,
  () => () => 1,
  () => Symbol('s'),
  () => NaN,
  () => -Infinity,
  () => new Date(0),
  () => new Map([[1, 2]]),
  () => {
    const c: Record<string, unknown> = {};
    c.c = c;
    return c;
  },
  () =>
    Object.defineProperty({}, 'g', {
      enumerable: true,
      get: () => {
        throw new Error('getter ran');
      },
    }),
  () => {
    let v: unknown = 1;
    for (let i = 0; i < 500; i++) v = [v];
    return v;
  },
  () => 'y'.repeat((1 << 20) + 1),
  () => [undefined],
);

type Mutation = (a: Record<string, unknown>) => void;
/** The first task, or a detached object once an earlier mutation removed it. */
const task0 = (a: Record<string, unknown>) =>
  (a.job as { taskGroups: Array<{ tasks: Array<Record<string, unknown>> }> }).taskGroups[0]?.tasks[0] ?? { config: {} };
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  hostileValue.map(
    (make): Mutation =>
      (a) =>
        void ((task0(a).config as Record<string, unknown>).hostile = make()),
  ),
  hostileValue.map(
    (make): Mutation =>
      (a) =>
        void (task0(a).env = { E: make() }),
  ),
  hostileValue.map(
    (make): Mutation =>
      (a) =>
        void (a.allocModifyIndex = make()),
  ),
  fc.constantFrom<Mutation>(
    (a) => void delete a.id,
    (a) => void (a.taskGroup = 'nope'),
    (a) => void (task0(a).driver = 'no_such_driver'),
    (a) => void ((a.job as Record<string, unknown>).taskGroups = []),
    (a) => void (a.previousAllocation = a.id),
  ),
);

const allocation = fc
  .record({
    tasks: fc.array(fc.record({ name: taskName, config: mockConfig }), { minLength: 1, maxLength: 3 }),
    mutations: fc.oneof({ weight: 2, arbitrary: fc.constant<Mutation[]>([]) }, { weight: 1, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 2 }) }),
    waitRunning: fc.boolean(),
  })
  .map(({ tasks, mutations, waitRunning }) => {
    const a = makeAlloc(tasks.map((t) => ({ name: t.name, driver: 'mock_driver', config: t.config as Record<string, unknown> }))) as unknown as Record<
      string,
      unknown
    >;
    for (const m of mutations) m(a);
    return { alloc: a as unknown as Allocation, waitRunning };
  });

describe('property: random and mutated allocations through parse + addAlloc + destroy (#10)', function () {
  this.timeout(propertyTimeout(60_000));
  const newClient = useTempClients();

  it('a typed error with nothing on disk, or a clean run that leaves nothing once destroyed', async () => {
    const client = newClient();
    const allocRoot = path.join(client.dataDir, 'alloc');
    const tasksRoot = path.join(client.dataDir, 'client', 'tasks');
    const nothingLeft = async (what: string) => {
      expect(readdirSync(allocRoot), `${what}: alloc dirs`).to.deep.equal([]);
      if (existsSync(tasksRoot)) expect(readdirSync(tasksRoot), `${what}: client/tasks`).to.deep.equal([]);
      expect(await mountsUnder(client.dataDir), `${what}: mounts`).to.deep.equal([]);
    };
    await fc.assert(
      fc.asyncProperty(allocation, async ({ alloc, waitRunning }) => {
        let parsed: Allocation;
        try {
          parsed = parseAllocation(alloc);
        } catch (e) {
          expect(e, String(e)).to.be.instanceOf(InvalidAllocationError);
          return nothingLeft('refused by parseAllocation');
        }
        let runner;
        try {
          runner = client.addAlloc(parsed);
        } catch (e) {
          expect(e, String(e)).to.be.instanceOf(BerthError);
          return nothingLeft('refused by addAlloc');
        }
        if (waitRunning) await runner.waitFor('running');
        await runner.destroy();
        await nothingLeft('destroyed');
      }),
      propertyRuns(60),
    );
  });
});
