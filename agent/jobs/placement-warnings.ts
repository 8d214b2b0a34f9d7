/**
 * The register response's warnings for what a one-node agent accepts but cannot act on: an
 * `affinity` or `spread` is scored (the placed alloc's `Metrics` shows it) but never moves an
 * alloc, as there is no other node to prefer. In Nomad's warning format (`helper.MergeMultierrorWarnings`).
 * @module
 */
import type { Job } from '../../index.ts';

/** One line per job, group or task that has affinities or spreads. */
export function placementWarnings(job: Job): string[] {
  const out: string[] = [];
  const say = (where: string, what: string) =>
    out.push(`${where}: ${what} accepted and scored, but on a one-node agent it never changes where an allocation is placed`);
  const kinds = (a: unknown[] | undefined, s: unknown[] | undefined) => [a?.length ? 'affinity' : '', s?.length ? 'spread' : ''].filter(Boolean).join(' and ');
  const jobKinds = kinds(job.affinities, job.spreads);
  if (jobKinds) say(`Job "${job.id}"`, jobKinds);
  for (const g of job.taskGroups) {
    const gk = kinds(g.affinities, g.spreads);
    if (gk) say(`Group "${g.name}"`, gk);
    for (const t of g.tasks) if (t.affinities?.length) say(`Task "${t.name}" in group "${g.name}"`, 'affinity');
  }
  return out;
}

/** Nomad's `MergeMultierrorWarnings` text: "" for none, else "N warning(s):" and one "* " line each. */
export function formatWarnings(warnings: string[]): string {
  if (warnings.length === 0) return '';
  return `${warnings.length === 1 ? '1 warning:' : `${warnings.length} warnings:`}\n${warnings.map((w) => `\n* ${w.trim()}`).join('')}`;
}
