/**
 * Stanzas berth does not run, found in berth's camelCase job (Nomad input has been mapped to it
 * first): Nomad's template, vault, volumes, CSI, Consul Connect, devices, ... and the
 * container drivers. Each is refused by name with its path; a host that asks for warnings gets the
 * same list and the stanza is left out (a refused driver stays refused: its task cannot run).
 * @module
 */
import { foreignTemplateFunctions } from '../template-functions.ts';
import type { UnsupportedStanza } from '../errors.ts';
import { UNSUPPORTED_DRIVERS } from './driver-config.ts';
import { renderPath } from './issues.ts';
import { unsupportedCamelKeys } from './nomad.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '' || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObj(v)) return Object.keys(v).length === 0;
  return false;
}

/** What {@link findUnsupported} found. */
export interface UnsupportedFound {
  /** Stanzas that may be left out when the host asks for warnings. */
  removable: UnsupportedStanza[];
  /** Stanzas that are refused whatever the host asks (a task's driver). */
  fatal: UnsupportedStanza[];
}

/**
 * Finds every refused stanza in a camelCase job (`path` is the job's berth path) and, when
 * `remove`, deletes it from the (already copied) job so what remains can run.
 */
export function findUnsupported(job: unknown, path: string, remove: boolean): UnsupportedFound {
  const found: UnsupportedFound = { removable: [], fatal: [] };
  const keys = (o: unknown, type: string, p: string) => {
    if (!isObj(o)) return;
    for (const [k, stanza] of Object.entries(unsupportedCamelKeys(type))) {
      if (k in o && !isEmpty(o[k])) {
        found.removable.push({ stanza, path: renderPath([k], p) });
        if (remove) delete o[k];
      }
    }
  };
  const filter = (o: Obj, key: string, p: string, why: (item: Obj) => [string, string] | undefined) => {
    const list = o[key];
    if (!Array.isArray(list)) return;
    const keep: unknown[] = [];
    list.forEach((item, i) => {
      const w = isObj(item) ? why(item) : undefined;
      if (w) found.removable.push({ stanza: w[0], path: renderPath([key, i, w[1]], p) });
      else keep.push(item);
    });
    if (remove) o[key] = keep;
  };
  const services = (o: Obj, p: string) => {
    filter(o, 'services', p, (s) =>
      typeof s.provider === 'string' && s.provider !== '' && s.provider !== 'nomad'
        ? [`service provider ${JSON.stringify(s.provider)}`, 'provider']
        : undefined,
    );
    (Array.isArray(o.services) ? o.services : []).forEach((s, si) => {
      const sp = renderPath(['services', si], p);
      keys(s, 'Service', sp);
      if (isObj(s)) {
        filter(s, 'checks', sp, (c) =>
          typeof c.type === 'string' && !['http', 'tcp', 'script'].includes(c.type) ? [`check type ${JSON.stringify(c.type)}`, 'type'] : undefined,
        );
        (Array.isArray(s.checks) ? s.checks : []).forEach((c, ci) => keys(c, 'Check', renderPath(['checks', ci], sp)));
      }
    });
  };
  if (!isObj(job)) return found;
  keys(job, 'Job', path);
  (Array.isArray(job.taskGroups) ? job.taskGroups : []).forEach((g, gi) => {
    const gp = renderPath(['taskGroups', gi], path);
    if (!isObj(g)) return;
    keys(g, 'TaskGroup', gp);
    filter(g, 'networks', gp, (n) =>
      typeof n.mode === 'string' && n.mode !== '' && n.mode !== 'host' ? [`network mode ${JSON.stringify(n.mode)}`, 'mode'] : undefined,
    );
    (Array.isArray(g.networks) ? g.networks : []).forEach((n, ni) => {
      const np = renderPath(['networks', ni], gp);
      keys(n, 'Network', np);
      for (const list of ['reservedPorts', 'dynamicPorts'])
        if (isObj(n) && Array.isArray(n[list])) (n[list] as unknown[]).forEach((port, pi) => keys(port, 'Port', renderPath([list, pi], np)));
    });
    services(g, gp);
    (Array.isArray(g.tasks) ? g.tasks : []).forEach((t, ti) => {
      const tp = renderPath(['tasks', ti], gp);
      if (!isObj(t)) return;
      if (typeof t.driver === 'string' && UNSUPPORTED_DRIVERS.includes(t.driver))
        found.fatal.push({ stanza: `driver ${JSON.stringify(t.driver)}`, path: renderPath(['driver'], tp) });
      keys(t, 'Task', tp);
      keys(t.resources, 'Resources', renderPath(['resources'], tp));
      keys(t.logs, 'LogConfig', renderPath(['logs'], tp));
      keys(t.restartPolicy, 'RestartPolicy', renderPath(['restartPolicy'], tp));
      (Array.isArray(t.artifacts) ? t.artifacts : []).forEach((a, ai) => keys(a, 'Artifact', renderPath(['artifacts', ai], tp)));
      services(t, tp);
      // A template that reads Consul or Vault cannot render here: refused by name, at its path.
      (Array.isArray(t.templates) ? t.templates : []).forEach((tm, tmi) => {
        if (!isObj(tm) || typeof tm.data !== 'string') return;
        const [l, r] = [tm.leftDelimiter, tm.rightDelimiter].map((d) => (typeof d === 'string' ? d : undefined));
        for (const f of foreignTemplateFunctions(tm.data, l, r))
          found.fatal.push({ stanza: `template function "${f.name}" (${f.needs})`, path: renderPath(['templates', tmi, 'data'], tp) });
      });
    });
  });
  return found;
}
