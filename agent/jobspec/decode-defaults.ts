/**
 * The defaults Nomad's HCL2 parser (jobspec2's `normalizeJob`, `parse_job.go`) fills while
 * decoding, before any canonicalization, so `/v1/jobs/parse` without `Canonicalize` has them
 * too: a template's `ChangeMode` "restart", `Perms` "0644", `Splay` 5 s and `ErrMissingKey`
 * false (`normalizeTemplates`); its `change_script`'s `Args` [], `Timeout` 5 s, `FailOnError`
 * and `RunOnFirstRender` false (`normalizeChangeScript`); a periodic block with a cron or crons
 * `SpecType` "cron". jobspec2's other decode-time fills touch what berth decodes elsewhere (job
 * ID and name, alone tasks, ports, constraint operators) or refuses (vault, scaling, identity,
 * secret). Nothing else: the rest stays to canonicalization. Pure.
 * @module
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** Five seconds in nanoseconds: jobspec2's template splay and change script timeout. */
const FIVE_SECONDS_NS = 5e9;

/** Sets `key` when the decoded file left it unset (Go's nil pointer). */
function unset(o: Obj, key: string, value: unknown): void {
  if (o[key] === undefined || o[key] === null) o[key] = value;
}

/** Fills jobspec2's decode-time defaults into a decoded API job (see the module doc), in place. */
export function fillDecodeDefaults(job: Obj): void {
  // jobspec2 sets SpecType only when the block names a cron (a non-nil Spec or Specs).
  const p = job.Periodic;
  if (isObj(p) && (p.Spec !== undefined || p.Specs !== undefined)) p.SpecType = 'cron';
  for (const group of list(job.TaskGroups))
    for (const task of list(group.Tasks))
      for (const t of list(task.Templates)) {
        unset(t, 'ChangeMode', 'restart');
        unset(t, 'Perms', '0644');
        unset(t, 'Splay', FIVE_SECONDS_NS);
        unset(t, 'ErrMissingKey', false);
        const ch = t.ChangeScript;
        if (!isObj(ch)) continue;
        unset(ch, 'Args', []);
        unset(ch, 'Timeout', FIVE_SECONDS_NS);
        unset(ch, 'FailOnError', false);
        unset(ch, 'RunOnFirstRender', false);
      }
}
