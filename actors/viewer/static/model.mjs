// The viewer's model: what the page shows, folded from viewer records. Shared by the server
// (the state a page gets when it connects) and the page (live updates, replay). Plain data only.
// Types: model.d.mts.

/** Bounds that keep a long-running server's model small. */
export const DEFAULT_LIMITS = { timeline: 200, endedActors: 400, destroyedAllocs: 50 };

/** An empty model. */
export function emptyModel(limits = DEFAULT_LIMITS) {
  return { t0: 0, t: 0, seq: 0, limits, actors: {}, ended: [], allocs: {}, allocOrder: [], destroyed: [] };
}

/** The alloc id an actor key belongs to ("alloc-<id>/task-…" → "<id>"). */
export function allocOfKey(key) {
  if (!key.startsWith('alloc-')) return undefined;
  const slash = key.indexOf('/');
  return key.slice(6, slash < 0 ? undefined : slash);
}

function allocEntry(m, id, t) {
  let a = m.allocs[id];
  if (!a) {
    a = {
      id,
      job: '',
      group: '',
      tasks: [],
      preempted: [],
      previous: undefined,
      priority: undefined,
      state: 'pending',
      added: t,
      timeline: [],
      waits: {},
      actors: [],
    };
    m.allocs[id] = a;
    m.allocOrder.push(id);
  }
  return a;
}

function pushTimeline(m, a, entry) {
  a.timeline.push(entry);
  if (a.timeline.length > m.limits.timeline) a.timeline.splice(0, a.timeline.length - m.limits.timeline);
}

function removeAlloc(m, id) {
  const a = m.allocs[id];
  delete m.allocs[id];
  const i = m.allocOrder.indexOf(id);
  if (i >= 0) m.allocOrder.splice(i, 1);
  if (a) for (const key of a.actors) delete m.actors[key];
}

/** Applies one record to the model (mutates it) and returns it. */
export function applyRecord(m, r) {
  if (!m.t0) m.t0 = r.t;
  m.t = r.t;
  m.seq++;
  switch (r.k) {
    case 'actor': {
      m.actors[r.id] = { id: r.id, name: r.name, parent: r.parent, kind: r.kind, state: '', status: 'active', born: r.t, since: r.t, lastEvent: '' };
      const al = allocOfKey(r.id);
      if (al) allocEntry(m, al, r.t).actors.push(r.id);
      break;
    }
    case 'state': {
      const a = m.actors[r.id];
      if (!a) break;
      if (a.state !== r.state) a.since = r.t;
      a.state = r.state;
      if (r.ev) a.lastEvent = r.ev;
      if (a.status === 'active' && r.status !== 'active') {
        a.ended = r.t;
        m.ended.push(r.id);
        if (m.ended.length > m.limits.endedActors)
          for (const key of m.ended.splice(0, m.ended.length - m.limits.endedActors))
            if (m.actors[key] && m.actors[key].status !== 'active') delete m.actors[key];
      }
      a.status = r.status;
      break;
    }
    case 'event': {
      const a = m.actors[r.id];
      if (a) a.lastEvent = r.type;
      break;
    }
    case 'alloc': {
      const a = allocEntry(m, r.alloc, r.t);
      a.job = r.job;
      if (r.name) a.name = r.name;
      a.group = r.group;
      a.tasks = r.tasks;
      a.preempted = r.preempted;
      a.previous = r.previous;
      a.priority = r.priority;
      break;
    }
    case 'bus': {
      if (!r.alloc) break;
      const a = allocEntry(m, r.alloc, r.t);
      if (r.type === 'alloc.state') {
        a.state = r.to;
        if (r.to === 'destroyed') {
          m.destroyed.push(a.id);
          if (m.destroyed.length > m.limits.destroyedAllocs)
            for (const id of m.destroyed.splice(0, m.destroyed.length - m.limits.destroyedAllocs)) removeAlloc(m, id);
        }
      } else if (r.type === 'watcher.waiting') {
        a.waits[r.watched] = { role: r.role, mode: r.mode, since: r.t };
      } else if (r.type === 'watcher.released') {
        const w = a.waits[r.watched] || (a.waits[r.watched] = { role: 'preempted', mode: 'local', since: r.t });
        w.released = r.t;
        w.reason = r.reason;
      }
      if (m.allocs[r.alloc]) pushTimeline(m, a, r);
      break;
    }
  }
  return m;
}

/** Folds records into a fresh model. */
export function foldRecords(records, limits = DEFAULT_LIMITS) {
  const m = emptyModel(limits);
  for (const r of records) applyRecord(m, r);
  return m;
}

const short = (id) => (id ? String(id).slice(0, 8) : '""');

/** The line a timeline shows for a bus record. */
export function recordText(r) {
  switch (r.type) {
    case 'alloc.state':
      return `alloc ${r.from ?? '∅'} → ${r.to}`;
    case 'task.event':
      return `${r.task}: ${r.ev}${r.msg ? ` — ${r.msg}` : ''}`;
    case 'hook.error':
      return `${r.kind} hook ${r.hook} failed: ${r.error}`;
    case 'watcher.waiting':
      return `waits for ${r.role} ${short(r.watched)} (${r.mode} watcher)`;
    case 'watcher.retry':
      return `retry ${short(r.watched)} in ${r.delayMs} ms: ${r.error}`;
    case 'watcher.released':
      return `released by ${short(r.watched)}: ${r.reason}${r.clientStatus ? ` (${r.clientStatus})` : ''}`;
    case 'migration.started':
      return `migration from ${short(r.previous)} started (${r.mode})`;
    case 'migration.skipped':
      return `migration skipped: ${r.reason}`;
    case 'migration.done':
      return `migration from ${short(r.previous)} done in ${r.ms} ms${r.bytes !== undefined ? `, ${r.bytes} bytes` : ''}`;
    case 'migration.failed':
      return `migration from ${short(r.previous)} failed: ${r.error}`;
    case 'chroot.built':
      return `${r.task}: chroot built, ${r.files} files, ${r.dirs} dirs in ${r.ms} ms`;
    case 'client.error':
      return `error${r.actorId ? ` in ${r.actorId}` : ''}: ${r.error}`;
    default:
      return r.type;
  }
}

/** The states a state string makes active: "running.tasks" → running, running.tasks. */
export function activeStates(state) {
  const out = new Set();
  if (!state) return out;
  for (const leaf of state.split(',')) {
    const parts = leaf.split('.');
    for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join('.'));
  }
  return out;
}
