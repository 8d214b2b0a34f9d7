/**
 * Turning schema issues into berth's `path: problem` lines: paths in berth's camelCase
 * (`job.taskGroups[0].tasks[1].config`), problems a person can act on, and a did-you-mean for
 * every unknown key.
 * @module
 */
import { z as zod, type z } from 'zod';

/** `a.b[2].c` from path parts; keys that are not identifiers are quoted. */
export function renderPath(parts: ReadonlyArray<PropertyKey>, prefix = ''): string {
  let out = prefix;
  for (const p of parts) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (typeof p === 'string' && /^[A-Za-z_$][\w$-]*$/.test(p)) out += out ? `.${p}` : p;
    else out += `[${JSON.stringify(String(p).length > 40 ? `${String(p).slice(0, 40)}...` : String(p))}]`;
  }
  return out || '(root)';
}

/** Misspellings people make that edit distance does not catch (Nomad HCL names, long words). */
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

function distance(a: string, b: string): number {
  const m = a.length;
  const n = b.length;
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= m; i++) {
    const cur = [i];
    for (let j = 1; j <= n; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[n]!;
}

const squash = (s: string) => s.toLowerCase().replace(/[_-]/g, '');

/** The known key `key` most likely meant, or undefined. */
export function didYouMean(key: string, known: readonly string[]): string | undefined {
  const k = squash(key);
  for (const cand of known) if (squash(cand) === k) return cand;
  for (const cand of known) if (ALIASES[cand]?.some((a) => squash(a) === k)) return cand;
  let best: string | undefined;
  let bestD = Infinity;
  for (const cand of known) {
    const d = distance(k, squash(cand));
    if (d < bestD) [best, bestD] = [cand, d];
  }
  if (best !== undefined && bestD <= Math.max(1, Math.floor(Math.min(k.length, best.length) / 3))) return best;
  const prefix = known.find((c) => squash(c).startsWith(k) || (k.length >= 3 && k.startsWith(squash(c)) && squash(c).length >= 3));
  return prefix;
}

/** "unknown field" with a did-you-mean when one is close. */
export function unknownKeyProblem(key: string, known: readonly string[]): string {
  const guess = didYouMean(key, known);
  const what = `unknown field ${JSON.stringify(key)}`;
  if (guess) return `${what} (did you mean ${JSON.stringify(guess)}?)`;
  return known.length ? `${what} (known: ${known.join(', ')})` : what;
}

const KNOWN = 'known keys:';

/**
 * A strict object (unknown keys are an issue) whose unknown-key issue carries its known keys, so
 * {@link issueLines} can suggest the closest one. Every object in berth's schemas is one.
 */
export function strict<S extends z.core.$ZodLooseShape>(shape: S, description?: string) {
  const known = Object.keys(shape);
  const o = zod.strictObject(shape, { error: (iss) => (iss.code === 'unrecognized_keys' ? `${KNOWN}${JSON.stringify(known)}` : undefined) });
  return description ? o.describe(description) : o;
}

function expectedText(expected: string): string {
  switch (expected) {
    case 'string':
      return 'must be a string';
    case 'number':
      return 'must be a number';
    case 'int':
      return 'must be an integer';
    case 'boolean':
      return 'must be a boolean';
    case 'array':
      return 'must be an array';
    case 'object':
    case 'record':
      return 'must be an object';
    default:
      return `must be ${expected}`;
  }
}

/** The problem text for one zod issue (without its path). */
export function problemText(iss: z.core.$ZodRawIssue): string {
  switch (iss.code) {
    case 'invalid_type':
      return iss.input === undefined ? 'is required' : expectedText(iss.expected);
    case 'too_small':
      if (iss.origin === 'array') return iss.minimum === 1 ? 'must be a non-empty array' : `must have at least ${iss.minimum} items`;
      if (iss.origin === 'string') return 'must not be empty';
      return iss.minimum === 0 ? 'must not be negative' : `must be at least ${iss.minimum}`;
    case 'too_big':
      if (iss.origin === 'string') return `must be at most ${iss.maximum} characters`;
      if (iss.origin === 'array') return `must have at most ${iss.maximum} items`;
      return `must be at most ${iss.maximum}`;
    case 'invalid_value':
      return `must be one of ${iss.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union':
      return 'has an invalid value';
    default:
      return iss.message ?? 'is invalid';
  }
}

/**
 * The error map every berth schema parse uses: berth's wording for zod's built-in issues. Kept
 * for callers that want it per parse; berth's own parses leave it out (a per-parse map takes zod
 * off its fast path, ~10x slower) and reword the issues afterwards ({@link issueLines}).
 */
export const berthErrorMap = (iss: z.core.$ZodRawIssue): string => problemText(iss);

/** zod's own wording, which {@link issueLines} replaces with berth's. */
const ZOD_DEFAULT = /^(Invalid input|Invalid option|Too small|Too big|Invalid string|Invalid number|Invalid element|Invalid key|Invalid value)/;

function reworded(iss: z.core.$ZodIssue): string {
  if (!ZOD_DEFAULT.test(iss.message)) return iss.message;
  if (iss.code === 'invalid_type') return / received undefined$/.test(iss.message) ? 'is required' : problemText({ ...iss, input: null } as z.core.$ZodRawIssue);
  return problemText(iss as z.core.$ZodRawIssue);
}
/** `path: problem` lines for a failed parse; unknown keys get one line each, with a did-you-mean. */
export function issueLines(error: z.ZodError, prefix = ''): string[] {
  const out: string[] = [];
  for (const iss of error.issues) {
    if (iss.code === 'unrecognized_keys') {
      const known: string[] = iss.message.startsWith(KNOWN) ? JSON.parse(iss.message.slice(KNOWN.length)) : [];
      for (const k of iss.keys) out.push(`${renderPath([...iss.path, k], prefix)}: ${unknownKeyProblem(k, known)}`);
      continue;
    }
    if (iss.code === 'invalid_union' && iss.errors.length && ZOD_DEFAULT.test(iss.message)) {
      // The first branch's own problems say more than "invalid value".
      const inner = iss.errors.flat();
      if (inner.length) {
        for (const sub of inner) out.push(`${renderPath([...iss.path, ...sub.path], prefix)}: ${reworded(sub)}`);
        continue;
      }
    }
    out.push(`${renderPath(iss.path, prefix)}: ${reworded(iss)}`);
  }
  return [...new Set(out)];
}
