/**
 * Turning inspection events and bus messages into viewer records: small, plain, and free of
 * secrets. Only whitelisted fields leave: no machine context (it holds the job, with every task's
 * env values), no event payloads beyond their type, no `alloc.updated` messages.
 * @module
 */
import type { BusMessage } from '../../bus/messages.ts';
import type { ActorKind, ViewerRecord } from './static/model.mjs';

export type { ActorKind, ViewerRecord } from './static/model.mjs';

/** A machine's state value as a string of its active leaf paths ("running.tasks"). */
export function stateString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!value || typeof value !== 'object') return '';
  const out: string[] = [];
  const walk = (v: unknown, prefix: string) => {
    if (typeof v === 'string') {
      out.push(prefix ? `${prefix}.${v}` : v);
      return;
    }
    const entries = Object.entries(v as Record<string, unknown>);
    if (!entries.length && prefix) out.push(prefix);
    for (const [k, child] of entries) walk(child, prefix ? `${prefix}.${k}` : k);
  };
  walk(value, '');
  return out.join(',');
}

/** What an actor is, from its id and its parent's key (berth's stable ids). */
export function actorKind(name: string, parentKey: string | undefined): ActorKind {
  if (!parentKey) return name === 'client' ? 'client' : name.startsWith('alloc-') ? 'alloc' : 'effect';
  if (name.startsWith('task-')) return 'task';
  if (name === 'await-previous') return 'watchers';
  if (parentKey.endsWith('/await-previous')) return 'watcher';
  return 'effect';
}

/** The alloc fields the page shows, from an alloc machine's context (nothing else is read). */
export function allocMeta(t: number, ctx: unknown): ViewerRecord | undefined {
  const alloc = (ctx as { alloc?: Record<string, unknown> } | undefined)?.alloc;
  if (!alloc || typeof alloc.id !== 'string') return undefined;
  const job = alloc.job as { id?: string; priority?: number; taskGroups?: Array<{ name: string; tasks: Array<{ name: string }> }> } | undefined;
  const group = job?.taskGroups?.find((g) => g.name === alloc.taskGroup);
  return {
    k: 'alloc',
    t,
    alloc: alloc.id,
    ...(typeof alloc.name === 'string' && alloc.name ? { name: alloc.name } : {}),
    job: String(alloc.jobId ?? job?.id ?? ''),
    group: String(alloc.taskGroup ?? ''),
    tasks: group?.tasks.map((x) => x.name) ?? [],
    preempted: Array.isArray(alloc.preemptedAllocations) ? alloc.preemptedAllocations.map(String) : [],
    ...(typeof alloc.previousAllocation === 'string' && alloc.previousAllocation ? { previous: alloc.previousAllocation } : {}),
    ...(typeof job?.priority === 'number' ? { priority: job.priority } : {}),
  };
}

/** A bus message as a record, or undefined for kinds the viewer leaves out. */
export function busRecord(m: BusMessage): ViewerRecord | undefined {
  const base = { k: 'bus' as const, t: m.time, type: m.type };
  switch (m.type) {
    case 'alloc.state':
      return { ...base, alloc: m.allocId, from: m.from, to: m.to };
    case 'task.event':
      return { ...base, alloc: m.allocId, task: m.task, ev: m.event.type, msg: m.event.displayMessage ?? '' };
    case 'hook.error':
      return { ...base, alloc: m.allocId, hook: m.hook, kind: m.kind, error: m.error };
    case 'watcher.waiting':
      return { ...base, alloc: m.allocId, watched: m.watchedAllocId, role: m.role, mode: m.mode };
    case 'watcher.retry':
      return { ...base, alloc: m.allocId, watched: m.watchedAllocId, error: m.error, delayMs: m.delayMs };
    case 'watcher.released':
      return { ...base, alloc: m.allocId, watched: m.watchedAllocId, reason: m.reason, ...(m.clientStatus ? { clientStatus: m.clientStatus } : {}) };
    case 'migration.started':
      return { ...base, alloc: m.allocId, previous: m.previousAllocId, mode: m.mode };
    case 'migration.skipped':
      return { ...base, alloc: m.allocId, previous: m.previousAllocId, reason: m.reason };
    case 'migration.done':
      return { ...base, alloc: m.allocId, previous: m.previousAllocId, mode: m.mode, ms: m.ms, ...(m.bytes !== undefined ? { bytes: m.bytes } : {}) };
    case 'migration.failed':
      return { ...base, alloc: m.allocId, previous: m.previousAllocId, error: m.error };
    case 'chroot.built':
      return { ...base, alloc: m.allocId, task: m.task, files: m.files, dirs: m.dirs, ms: m.ms };
    case 'client.error':
      return { ...base, ...(m.allocId ? { alloc: m.allocId } : {}), ...(m.actorId ? { actorId: m.actorId } : {}), error: m.error };
    default:
      return undefined; // alloc.updated carries the whole job (env values); task.state is in the tree
  }
}
