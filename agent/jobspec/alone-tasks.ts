/**
 * A `task` written directly in a `job` (no `group` around it), as jobspec2's `normalizeJob` reads
 * it: each becomes a group of its own, named after the task, with that one task (count 1 by
 * canonicalization), placed before the declared groups in the order written.
 * @module
 */
import type { DecodeContext } from './decode.ts';

type Obj = Record<string, unknown>;

/**
 * Moves the decoded job's `Tasks` into groups of their own (see the module doc), and the paths of
 * the problems decoding found with them: `job.tasks[i]` is `job.taskGroups[i].tasks[0]`, a declared
 * group's `job.taskGroups[j]` is `job.taskGroups[n + j]` with `n` the job-level tasks.
 */
export function groupAloneTasks(job: Obj, ctx: DecodeContext): void {
  const tasks = job.Tasks;
  delete job.Tasks;
  if (!Array.isArray(tasks) || tasks.length === 0) return;
  const groups = Array.isArray(job.TaskGroups) ? (job.TaskGroups as Obj[]) : [];
  job.TaskGroups = [...(tasks as Obj[]).map((t) => ({ Name: t.Name, Tasks: [t] })), ...groups];
  const n = tasks.length;
  const moved = (path: string) =>
    path.replace(/^job\.(tasks|taskGroups)\[(\d+)\]/, (_, list: string, i: string) =>
      list === 'tasks' ? `job.taskGroups[${i}].tasks[0]` : `job.taskGroups[${n + Number(i)}]`,
    );
  for (const i of ctx.issues) i.path = moved(i.path);
  for (const u of ctx.unsupported) u.path = moved(u.path);
}
