/**
 * The register response's warnings for what a submitted job sets that berth changes or keeps
 * without acting on, so nothing changes silently (Nomad's `JobRegisterResponse.Warnings`, one line
 * each through `formatWarnings`). Read from the job as submitted, before canonicalization fills in
 * its defaults: a service with no `provider` is the one value berth changes (to `nomad`: Nomad's
 * default is Consul, which berth does not run); the others are kept in the job and ignored.
 *
 * | value                                   | on berth                                              |
 * |-----------------------------------------|-------------------------------------------------------|
 * | service without `provider`              | `nomad`                                               |
 * | service or check `on_update` not        | ignored: every check counts for deployment health     |
 * | `require_healthy`                       |                                                       |
 * | check `address_mode` unlike its service | ignored: a check is reached as its service is         |
 * | service `enable_tag_override`           | ignored: a Consul setting                             |
 * | job `all_at_once`                       | ignored: one node, one scheduler, nothing to interleave|
 * | job `node_pool` other than `default`    | ignored: the job is placed on the agent's one node    |
 * | task `logs { enabled = false }`         | ignored: logs are always kept                         |
 * | network `hostname`                      | ignored: berth makes no network namespace             |
 * | a task's `resources { network }`        | its ports are the group's (every task sees them)      |
 * @module
 */
import type { ApiJob } from '../state/types.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const set = (v: unknown) => v !== undefined && v !== null && v !== '';

/** One line per value berth changes or ignores in `job` (as submitted; see the module doc). */
export function changedValueWarnings(job: ApiJob): string[] {
  const out: string[] = [];
  const jobName = String(job.Name ?? job.ID ?? '');
  if (job.AllAtOnce === true) out.push(`Job "${job.ID}": all_at_once is kept but ignored (one node and one scheduler: nothing to interleave)`);
  if (set(job.NodePool) && job.NodePool !== 'default')
    out.push(`Job "${job.ID}": node_pool "${String(job.NodePool)}" is kept but ignored (the job is placed on the agent's one node, whatever its pool)`);
  for (const g of list(job.TaskGroups)) {
    const group = String(g.Name ?? '');
    for (const n of list(g.Networks))
      if (set(n.Hostname)) out.push(`Group "${group}": network hostname is kept but ignored (berth makes no network namespace)`);
    for (const s of list(g.Services)) serviceWarnings(out, s, `Group "${group}"`, `${jobName}-${group}`);
    for (const t of list(g.Tasks)) {
      const where = `Task "${String(t.Name ?? '')}" in group "${group}"`;
      if (isObj(t.LogConfig) && t.LogConfig.Enabled === false) out.push(`${where}: logs enabled = false is ignored (berth always keeps the task's logs)`);
      if (isObj(t.Resources) && list(t.Resources.Networks).length)
        out.push(
          `${where}: the ports of its resources network are allocated as the group's (berth's tasks share the host network; every task of the group sees them)`,
        );
      for (const s of list(t.Services)) serviceWarnings(out, s, where, `${jobName}-${group}-${String(t.Name ?? '')}`);
    }
  }
  return out;
}

function serviceWarnings(out: string[], s: Obj, owner: string, defaultName: string): void {
  const where = `${owner}, service "${set(s.Name) ? String(s.Name) : defaultName}"`;
  if (!set(s.Provider)) out.push(`${where}: no provider given, so berth uses "nomad" (Nomad's default is Consul, which berth does not run)`);
  if (set(s.OnUpdate) && s.OnUpdate !== 'require_healthy')
    out.push(`${where}: on_update "${String(s.OnUpdate)}" is kept but ignored (every check counts for deployment health)`);
  if (s.EnableTagOverride === true) out.push(`${where}: enable_tag_override is kept but ignored (a Consul setting)`);
  const mode = set(s.AddressMode) ? s.AddressMode : 'auto';
  for (const c of list(s.Checks)) {
    const check = `${where}, check "${String(c.Name ?? '')}"`;
    if (set(c.OnUpdate) && c.OnUpdate !== 'require_healthy')
      out.push(`${check}: on_update "${String(c.OnUpdate)}" is kept but ignored (every check counts for deployment health)`);
    if (set(c.AddressMode) && c.AddressMode !== mode)
      out.push(
        `${check}: address_mode "${String(c.AddressMode)}" is kept but ignored (a check is reached at its service's address, address_mode "${String(mode)}")`,
      );
  }
}
