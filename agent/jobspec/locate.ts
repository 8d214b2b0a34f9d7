/**
 * Where a berth field path (`job.taskGroups[0].tasks[1].config.command`) is in HCL text: the
 * schema reports paths, a person wants a line.
 * @module
 */
import { BLOCKS } from './blocks.ts';
import { locate, type Position } from './hcl.ts';
import type { SourceIndex } from './source-index.ts';

type Obj = Record<string, unknown>;

/** berth (camelCase) names back to HCL names, from the stanza tables (plus the ms suffixes). */
const HCL_NAME: Record<string, string> = (() => {
  const out: Record<string, string> = {
    killTimeoutMs: 'kill_timeout',
    shutdownDelayMs: 'shutdown_delay',
    logs: 'logs',
    restartPolicy: 'restart',
    reschedulePolicy: 'reschedule',
  };
  for (const spec of Object.values(BLOCKS))
    for (const [hcl, [api]] of Object.entries({ ...spec.fields, ...(spec.ignored ?? {}) })) out[api[0]!.toLowerCase() + api.slice(1)] ??= hcl;
  out.memoryMB = 'memory';
  out.memoryMaxMB = 'memory_max';
  out.cpu = 'cpu';
  out.sizeMB = 'size';
  return out;
})();

const LISTS: Record<string, string> = { taskGroups: 'group', tasks: 'task', networks: 'network', services: 'service', checks: 'check', artifacts: 'artifact' };

/** The position of `path` in `text`, following the job's group and task labels. */
export function locateBerthPath(source: SourceIndex, api: Obj, path: string): Position | undefined {
  const parts = path.match(/[^.[\]]+|\[\d+\]/g) ?? [];
  const steps: Array<[string, string?]> = [['job', String(api.ID ?? '')]];
  let node: unknown = api;
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    const next = parts[i + 1];
    if (LISTS[part] && next?.startsWith('[')) {
      const idx = Number(next.slice(1, -1));
      const apiKey = part === 'taskGroups' ? 'TaskGroups' : part[0]!.toUpperCase() + part.slice(1);
      const item = ((node as Obj)?.[apiKey] as Obj[] | undefined)?.[idx];
      const label = part === 'taskGroups' || part === 'tasks' ? String(item?.Name ?? '') : undefined;
      // A job-level task's own group is not written in the file: its task is found under the job.
      const written = part !== 'taskGroups' || source.find('group', label, 0) !== undefined;
      if (written) steps.push([LISTS[part]!, label]);
      node = item;
      i++;
      continue;
    }
    if (part.startsWith('[')) continue;
    steps.push([HCL_NAME[part] ?? part]);
    node = undefined;
  }
  const at = locate(source, steps);
  return at === undefined ? undefined : source.positionOf(at);
}
