/**
 * Small schema pieces shared by the allocation and job schemas.
 * @module
 */
import { z } from 'zod';
import { ARG_MAX, argStringProblem, envEntryBytes, MAX_EXACT_MB } from './limits.ts';
import { MEMORY_NO_LIMIT } from '../memory.ts';
import { parseGoDuration } from '../duration.ts';
import { errorText } from '../error-text.ts';

/** A whole number >= 0. zod says "expected number" of a string here; a missing one keeps "is required". */
export const nonNegInt = () => z.int({ error: (iss) => (iss.code === 'invalid_type' && iss.input !== undefined ? 'must be an integer' : undefined) }).min(0);

/** A finite number >= 0 (issueLines words its type issues: "must be a number", "is required"). */
export const nonNegNum = () => z.number().min(0);

/** A duration in milliseconds. */
export const ms = (what: string) => nonNegNum().describe(`${what}, in milliseconds`);

/** Time since the epoch, in milliseconds. */
export const epochMs = (what: string) => nonNegNum().describe(`${what}, ms since the epoch`);

/** A size in MB small enough that its byte count is an exact number. */
export const sizeMB = (what: string) =>
  nonNegInt()
    .max(MAX_EXACT_MB, { error: `must be at most ${MAX_EXACT_MB} MB (2^53 bytes: beyond that a byte count is not exact)` })
    .describe(`${what}, in MB`);

/** A `memory_max` in MB: a size, or {@link MEMORY_NO_LIMIT}. */
export const memoryMaxMB = (what: string) =>
  z
    .int({ error: (iss) => (iss.code === 'invalid_type' && iss.input !== undefined ? 'must be an integer' : undefined) })
    .min(MEMORY_NO_LIMIT, { error: `must not be negative, but for ${MEMORY_NO_LIMIT} (no hard limit)` })
    .max(MAX_EXACT_MB, { error: `must be at most ${MAX_EXACT_MB} MB (2^53 bytes: beyond that a byte count is not exact)` })
    .describe(`${what}, in MB; ${MEMORY_NO_LIMIT}: no hard limit (Nomad's MemoryNoLimit)`);

/** A one-of-strings field. */
export const oneOf = <T extends readonly [string, ...string[]]>(values: T) => z.enum(values);

/**
 * A string map that ends up in a process's environment (`env`, and `meta` as `NOMAD_META_*`):
 * no NUL in keys or values, no empty key, each `KEY=value` within MAX_ARG_STRLEN, the whole within
 * ARG_MAX. `prefix` is what the key becomes in the environment.
 */
export const envMap = (what: string, prefix = '') =>
  z
    .record(z.string(), z.string({ error: 'must be a string' }), { error: 'must be an object of strings' })
    .superRefine((m, ctx) => {
      let total = 0;
      for (const [k, v] of Object.entries(m)) {
        if (k === '') ctx.addIssue({ code: 'custom', message: 'keys must not be empty', path: [k] });
        const kp = argStringProblem(k, 'the key');
        if (kp && k.includes('\0')) ctx.addIssue({ code: 'custom', message: kp, path: [k] });
        const vp = argStringProblem(`${prefix}${k}=${v}`, 'the entry');
        if (v.includes('\0')) ctx.addIssue({ code: 'custom', message: 'must not contain NUL', path: [k] });
        else if (vp) ctx.addIssue({ code: 'custom', message: vp, path: [k] });
        total += envEntryBytes(prefix + k, v);
      }
      if (total > ARG_MAX)
        ctx.addIssue({ code: 'custom', message: `is ${total} bytes as environment variables, past the kernel's ${ARG_MAX}-byte limit (ARG_MAX)` });
    })
    .describe(what);

/** A list of strings. */
export const stringList = () => z.array(z.string({ error: 'must be a string' }), { error: 'must be an array of strings' });

/** A Go duration string ("10s") or milliseconds (a driver config's durations). */
export const goDuration = z.union([z.string(), z.number().min(0)], { error: 'must be a duration string like "10s" or a number of ms' }).superRefine((v, ctx) => {
  if (typeof v !== 'string' || v === '') return;
  try {
    if (parseGoDuration(v) < 0) ctx.addIssue({ code: 'custom', message: 'must not be negative' });
  } catch (e) {
    ctx.addIssue({ code: 'custom', message: errorText(e) });
  }
});
