/**
 * The schema and the model's types describe the same shape: every field of the types is in the
 * schema and the other way round (checked by the compiler; the spec only runs the check).
 */
import { expect } from 'chai';
import type { z } from 'zod';
import type { allocationSchema, jobSchema, taskGroupSchema, taskSchema } from '../../model/schema/allocation.ts';
import type { Allocation, Job, Task, TaskGroup } from '../../model/types.ts';

/** The keys one side has and the other lacks (never when they agree). */
type Missing<A, B> = Exclude<keyof A, keyof B>;
type Same<A, B> = [Missing<A, B>, Missing<B, A>] extends [never, never] ? true : { onlyIn: [Missing<A, B>, Missing<B, A>] };

const checks: [
  Same<Omit<z.input<typeof allocationSchema>, '$schema'>, Allocation>,
  Same<Omit<z.input<typeof jobSchema>, '$schema'>, Job>,
  Same<z.input<typeof taskGroupSchema>, TaskGroup>,
  Same<z.input<typeof taskSchema>, Task>,
] = [true, true, true, true];

describe('schema and model types', () => {
  it('name the same fields (a compile-time check)', () => {
    expect(checks).to.deep.equal([true, true, true, true]);
  });
});
