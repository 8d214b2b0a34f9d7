/**
 * What a task name must also be, beyond a path component: a cgroup directory name (the kernel
 * refuses a newline there, and a name like `cgroup.procs` or `memory.max` is an interface file of
 * the alloc's cgroup) and a value berth puts in the task's environment (`NOMAD_TASK_NAME`, so no
 * control characters). Small and separate so the allocation parser (and its schema) can call it.
 * @module
 */

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
