/**
 * What berth accepts as an id or a task name: shared by the allocation schema, the alloc dir and
 * the command line.
 * @module
 */
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `s` is a 36-character UUID. */
export function isUUID(s: unknown): s is string {
  return typeof s === 'string' && s.length === 36 && UUID_RE.test(s);
}

/** A surrogate not in a pair (with `u`, a pair is one code point): not storable as UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Longest task name, in UTF-8 bytes: leaves room under NAME_MAX and PATH_MAX for berth's own paths. */
export const MAX_TASK_NAME_BYTES = 128;

/** Names a task cannot take: the alloc dir's own entries (`alloc/` is shared by every task). */
export const RESERVED_TASK_NAMES: readonly string[] = ['alloc'];

/**
 * Why `name` cannot be a single path component (an alloc id's directory), or undefined when it
 * can: a non-empty string, not `.` or `..`, without `/` or NUL.
 */
export function pathComponentProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'must be a non-empty string';
  if (name === '.' || name === '..') return `must not be "${name}"`;
  if (name.includes('/')) return 'must not contain "/"';
  if (name.includes('\0')) return 'must not contain NUL';
  return undefined;
}

/**
 * Why `name` cannot be a task (directory) name, or undefined when it can. As Nomad: no slashes
 * (`/` or `\\`) and no NUL; and, since the name becomes a directory beside the shared `alloc/`,
 * not `.`, `..`, not a reserved name ({@link RESERVED_TASK_NAMES}), and at most
 * {@link MAX_TASK_NAME_BYTES} bytes. Shared by parseAllocation and AllocDir.newTaskDir.
 */
export function taskNameProblem(name: unknown): string | undefined {
  const p = pathComponentProblem(name);
  if (p) return p;
  const n = name as string;
  if (n.includes('\\')) return 'must not contain "\\"';
  if (LONE_SURROGATE.test(n)) return 'must be valid Unicode (it holds a lone surrogate)';
  if (RESERVED_TASK_NAMES.includes(n)) return `must not be "${n}" (reserved by the alloc dir)`;
  const bytes = Buffer.byteLength(n);
  if (bytes > MAX_TASK_NAME_BYTES) return `must be at most ${MAX_TASK_NAME_BYTES} bytes (got ${bytes})`;
  return taskNameCgroupProblem(n);
}

/** Controllers whose interface files (`<controller>.<name>`, v1 and v2) sit in every cgroup. */
const CGROUP_FILE_PREFIXES = [
  'cgroup',
  'cpu',
  'cpuacct',
  'cpuset',
  'memory',
  'io',
  'blkio',
  'pids',
  'hugetlb',
  'rdma',
  'misc',
  'devices',
  'freezer',
  'net_cls',
  'net_prio',
  'perf_event',
];
/** Whole names of cgroup v1 interface files. */
const CGROUP_FILES = ['tasks', 'notify_on_release', 'release_agent'];

/**
 * Why `name` cannot name a task's cgroup or go in its environment, or undefined when it can:
 * no control characters (newline, tab, DEL, ... U+0000–U+001F, U+007F), and not the name of a
 * cgroup interface file (`cgroup.*`, `memory.*`, `tasks`, ...). Path rules (`/`, `..`, length) are
 * the parser's `taskNameProblem`.
 */
export function taskNameCgroupProblem(name: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  const ctl = /[\u0000-\u001f\u007f]/.exec(name);
  if (ctl)
    return `must not contain control characters (found U+${ctl[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}): the name becomes a cgroup directory and an environment value`;
  const lower = name.toLowerCase();
  if (CGROUP_FILES.includes(lower)) return `must not be "${name}" (a cgroup interface file of the alloc's cgroup)`;
  const clash = CGROUP_FILE_PREFIXES.find((p) => lower.startsWith(`${p}.`));
  if (clash) return `must not start with "${clash}." (the name of the alloc cgroup's interface files)`;
  return undefined;
}

/**
 * Longest job ID, job name or group name berth accepts, in UTF-8 bytes: the same room as a task
 * name (Nomad sets no bound; these become alloc names, environment values and store keys).
 */
export const MAX_JOB_ID_BYTES = 128;

/**
 * Why `s` cannot be a job ID, job name or group name, or undefined when it can. As Nomad: not
 * empty, no NUL, and (IDs only) no space. Past Nomad, since the ID is a URL path segment, a
 * store key and part of every alloc name: no whitespace or other control character, no `/`, well-formed
 * UTF-16 (a lone surrogate cannot be stored as UTF-8 and read back), at most
 * {@link MAX_JOB_ID_BYTES} bytes. Names may hold spaces, as in Nomad.
 */
export function jobIdProblem(s: unknown, kind: 'id' | 'name'): string | undefined {
  if (typeof s !== 'string') return 'must be a string';
  if (s === '') return 'must not be empty';
  if (s.includes('\0')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(s)) return 'must be valid Unicode (it holds a lone surrogate)';
  if (kind === 'id' && /\s/.test(s)) return 'must not contain a space or other whitespace';
  // eslint-disable-next-line no-control-regex
  const ctl = /[\u0000-\u001f\u007f]/.exec(s);
  if (ctl) return `must not contain control characters (found U+${ctl[0].charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()})`;
  if (kind === 'id' && s.includes('/')) return 'must not contain "/"';
  const bytes = Buffer.byteLength(s);
  if (bytes > MAX_JOB_ID_BYTES) return `must be at most ${MAX_JOB_ID_BYTES} bytes (got ${bytes})`;
  return undefined;
}
