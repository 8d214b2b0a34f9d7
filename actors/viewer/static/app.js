// berth viewer page: live over Server-Sent Events, or a recording with a time slider.
// Everything it needs comes from the server it was loaded from.
import { activeStates, allocOfKey, applyRecord, emptyModel, foldRecords, recordText } from './model.mjs';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const short = (id) => String(id).slice(0, 8);
const hms = (t) => (t ? new Date(t).toISOString().slice(11, 23) : '');
const MAX_TREE_ALLOCS = 60;
const MAX_LOG_LINES = 500;

let model = emptyModel();
let charts = null;
let selectedAlloc = null; // null: follow the newest interesting alloc
let selectedTask = null;
let dirty = true;

// ---------- names ----------
function allocName(id) {
  const a = model.allocs[id];
  return a && (a.name || a.job) ? `${a.name || a.job} · ${short(id)}` : short(id);
}
function actorLabel(a) {
  if (a.kind === 'alloc') return allocName(a.name.slice(6));
  if (a.kind === 'task') {
    const al = allocOfKey(a.id);
    return `task ${al ? a.name.slice(6 + al.length) : a.name}`;
  }
  if (a.kind === 'watcher') return `watch ${allocName(a.name)}`;
  return a.name;
}
const stateLabel = (a) => (a.status === 'active' ? a.state || 'active' : a.state ? `${a.state} (${a.status})` : a.status);

// ---------- actor tree ----------
function renderTree() {
  const kids = new Map();
  const add = (parent, a) => {
    if (!kids.has(parent)) kids.set(parent, []);
    kids.get(parent).push(a);
  };
  for (const a of Object.values(model.actors)) {
    // Alloc actors are roots of their own (cheap spawns); the client is where they belong.
    const parent = a.parent ?? (a.kind === 'alloc' && model.actors.client ? 'client' : '');
    add(parent, a);
  }
  const li = (a) => {
    const ch = (kids.get(a.id) || []).filter((c) => c.id !== a.id);
    const cls = [
      `kind-${a.kind}`,
      a.status !== 'active' ? 'ended' : '',
      `status-${a.status}`,
      a.kind === 'alloc' && a.name.slice(6) === currentAlloc() ? 'selected' : '',
      a.kind === 'task' && a.id === currentTaskKey() ? 'selected' : '',
    ].join(' ');
    let inner = ch;
    let more = '';
    if (a.id === 'client' && ch.length > MAX_TREE_ALLOCS) {
      inner = ch.slice(-MAX_TREE_ALLOCS);
      more = `<li class="more">${ch.length - MAX_TREE_ALLOCS} older allocations not shown</li>`;
    }
    return `<li class="${cls}" data-key="${esc(a.id)}" data-kind="${a.kind}"><div class="row"><span class="name">${esc(actorLabel(a))}</span><span class="state">${esc(stateLabel(a))}</span></div>${inner.length || more ? `<ul>${more}${inner.map(li).join('')}</ul>` : ''}</li>`;
  };
  $('tree').innerHTML = (kids.get('') || []).map(li).join('');
}
$('tree').addEventListener('click', (e) => {
  const item = e.target.closest('li[data-key]');
  if (!item) return;
  const key = item.dataset.key;
  const al = allocOfKey(key);
  if (al) {
    selectedAlloc = al;
  }
  if (item.dataset.kind === 'task') selectedTask = model.actors[key]?.name.slice(6 + al.length) ?? null;
  else if (item.dataset.kind === 'alloc') selectedTask = null;
  dirty = true;
  openLogs();
});

// ---------- selection ----------
function currentAlloc() {
  if (selectedAlloc && model.allocs[selectedAlloc]) return selectedAlloc;
  // Follow: the newest alloc that waits for others, else the newest alloc.
  const ids = model.allocOrder;
  for (let i = ids.length - 1; i >= 0; i--) if (Object.keys(model.allocs[ids[i]].waits).length) return ids[i];
  return ids[ids.length - 1] ?? null;
}
function currentTask() {
  const a = model.allocs[currentAlloc()];
  if (!a) return null;
  if (selectedTask && a.tasks.includes(selectedTask)) return selectedTask;
  return a.tasks[0] ?? null;
}
function currentTaskKey() {
  const al = currentAlloc();
  const t = currentTask();
  return al && t ? `alloc-${al}/task-${al}-${t}` : null;
}

// ---------- charts ----------
function drawChart(el, chart) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${Math.ceil(chart.width)} ${Math.ceil(chart.height)}`);
  let html =
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#56616d"/></marker></defs>';
  for (const s of chart.states) {
    const cls = ['st', s.type, s.initial ? 'initial' : ''].join(' ');
    const lines = s.invokes.map((inv, i) => `<text class="inv" x="${s.x + 10}" y="${s.y + 32 + i * 16}">invoke ${esc(inv)}</text>`).join('');
    html += `<g class="${cls}" data-id="${esc(s.id)}"><rect x="${s.x}" y="${s.y}" width="${s.w}" height="${s.h}"/><text x="${s.x + 10}" y="${s.y + 17}">${s.initial ? '● ' : ''}${esc(s.label)}</text>${lines}</g>`;
  }
  for (const t of chart.transitions) {
    if (!t.points.length) continue;
    const d = t.points.map((p, i) => `${i ? 'L' : 'M'}${p[0]},${p[1]}`).join('');
    const label = t.labelBox ? `<text x="${t.labelBox.x}" y="${t.labelBox.y + 10}">${esc(t.label)}</text>` : '';
    html += `<g class="tr" data-source="${esc(t.source)}" data-target="${esc(t.target)}"><path d="${d}"/>${label}</g>`;
  }
  svg.innerHTML = html;
  el.replaceChildren(svg);
}
function highlight(el, state) {
  if (el.dataset.state === (state || '') && el.dataset.drawn) return;
  const active = activeStates(state);
  let deepest = null;
  for (const g of el.querySelectorAll('g.st')) {
    const on = active.has(g.dataset.id);
    g.classList.toggle('active', on);
    if (on && (!deepest || g.dataset.id.length > deepest.dataset.id.length)) deepest = g;
  }
  el.dataset.state = state || '';
  el.dataset.drawn = '1';
  // Keep the active state in view: the chart is drawn at the panel's width and scrolls.
  const svg = el.querySelector('svg');
  if (deepest && svg) {
    const r = deepest.querySelector('rect');
    const scale = svg.clientWidth / svg.viewBox.baseVal.width;
    const cy = (Number(r.getAttribute('y')) + Number(r.getAttribute('height')) / 2) * scale;
    el.scrollTo({ top: Math.max(0, cy - el.clientHeight / 2) });
  }
}

// ---------- who waits for whom ----------
function renderWaits() {
  const waiters = model.allocOrder.filter((id) => Object.keys(model.allocs[id].waits).length);
  if (!waiters.length) {
    $('waits').innerHTML = '<p class="none">nothing waits</p>';
    return;
  }
  const W = 360,
    bw = 130,
    bh = 34,
    gap = 10;
  let y = 6,
    body = '';
  for (const id of waiters.slice(-6)) {
    const a = model.allocs[id];
    const victims = Object.entries(a.waits);
    const blockH = Math.max(bh, victims.length * (bh + gap) - gap);
    const wy = y + blockH / 2 - bh / 2;
    body += `<g class="waiter" data-alloc="${esc(id)}"><rect x="4" y="${wy}" width="${bw}" height="${bh}"/><text x="12" y="${wy + 14}">${esc(allocName(id))}</text><text class="dim" x="12" y="${wy + 28}">${esc(a.state)}</text></g>`;
    victims.forEach(([vid, w], i) => {
      const vy = y + i * (bh + gap);
      const rel = w.released ? ' released' : '';
      const v = model.allocs[vid];
      body += `<g class="edge${rel}" data-from="${esc(id)}" data-to="${esc(vid)}"><path d="M${4 + bw},${wy + bh / 2} C${W / 2},${wy + bh / 2} ${W / 2},${vy + bh / 2} ${W - bw - 8},${vy + bh / 2}"/><text class="dim" text-anchor="end" x="${W - bw - 12}" y="${vy + bh / 2 - 5}">${esc(w.released ? `✓ ${w.reason}` : `${w.role}, ${w.mode}`)}</text></g>`;
      body += `<g class="victim${rel}" data-alloc="${esc(vid)}"><rect x="${W - bw - 4}" y="${vy}" width="${bw}" height="${bh}"/><text x="${W - bw + 4}" y="${vy + 14}">${esc(allocName(vid))}</text><text class="dim" x="${W - bw + 4}" y="${vy + 28}">${esc(v ? v.state : w.mode === 'remote' ? 'not on this client' : '')}</text></g>`;
    });
    y += blockH + 18;
  }
  $('waits').innerHTML =
    `<svg viewBox="0 0 ${W} ${y}"><defs><marker id="warrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#f2b14c"/></marker></defs>${body}</svg>`;
}

// ---------- timeline ----------
function renderTimeline(al) {
  const a = model.allocs[al];
  $('timeline-title').textContent = a ? allocName(al) : '';
  const list = $('timeline');
  const atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  list.innerHTML = a
    ? a.timeline.map((r) => `<li class="bus-${r.type.replace('.', '-')}"><time>${hms(r.t)}</time><span>${esc(recordText(r))}</span></li>`).join('')
    : '';
  if (atEnd) list.scrollTop = list.scrollHeight;
}

// ---------- render ----------
function render() {
  if (!dirty) return;
  dirty = false;
  $('clock').textContent = hms(model.t);
  renderTree();
  const al = currentAlloc();
  const actor = al ? model.actors[`alloc-${al}`] : undefined;
  $('alloc-title').textContent = al ? `${allocName(al)}: ${actor ? stateLabel(actor) : model.allocs[al].state}` : '';
  if (charts) highlight($('alloc-chart'), actor ? actor.state : '');
  const a = model.allocs[al];
  const tasks = a ? a.tasks : [];
  for (const sel of [$('task-select'), $('log-task')]) {
    const want = tasks.join('\n');
    if (sel.dataset.opts !== want) {
      sel.innerHTML = tasks.map((t) => `<option>${esc(t)}</option>`).join('');
      sel.dataset.opts = want;
    }
    if (currentTask()) sel.value = currentTask();
  }
  const tkey = currentTaskKey();
  const tActor = tkey ? model.actors[tkey] : undefined;
  $('task-title').textContent = tActor ? stateLabel(tActor) : 'not started';
  if (charts) highlight($('task-chart'), tActor ? tActor.state : '');
  renderWaits();
  renderTimeline(al);
}
// At most five renders a second, and never more than about a tenth of the time: the page
// often shares its cores with the host it watches.
let nextRender = 0;
function frame(now) {
  if (now >= nextRender) {
    const t0 = performance.now();
    render();
    nextRender = now + Math.max(200, 10 * (performance.now() - t0));
  }
  requestAnimationFrame(frame);
}
$('task-select').addEventListener('change', (e) => {
  selectedTask = e.target.value;
  selectedAlloc = currentAlloc();
  dirty = true;
  openLogs();
});
$('log-task').addEventListener('change', (e) => {
  selectedTask = e.target.value;
  selectedAlloc = currentAlloc();
  dirty = true;
  openLogs();
});
$('log-stream').addEventListener('change', () => openLogs());

// ---------- logs ----------
let logSource = null;
let logKey = '';
function openLogs(force) {
  if (mode !== 'live') return;
  const al = currentAlloc();
  const task = currentTask();
  const stream = $('log-stream').value;
  const key = `${al}|${task}|${stream}`;
  if (!force && key === logKey) return;
  logKey = key;
  logSource?.close();
  logSource = null;
  const pre = $('log');
  pre.textContent = '';
  if (!al || !task) return;
  const es = new EventSource(`/api/logs?alloc=${encodeURIComponent(al)}&task=${encodeURIComponent(task)}&stream=${stream}`);
  logSource = es;
  let partial = '';
  let lines = [];
  es.onmessage = (e) => {
    const text = partial + JSON.parse(e.data);
    const parts = text.split('\n');
    partial = parts.pop();
    lines.push(...parts);
    if (lines.length > MAX_LOG_LINES) lines = lines.slice(-MAX_LOG_LINES);
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.textContent = lines.join('\n') + (partial ? `\n${partial}` : '');
    if (atEnd) pre.scrollTop = pre.scrollHeight;
  };
  es.addEventListener('failed', (e) => {
    pre.textContent += `\n[log stream failed: ${JSON.parse(e.data)}]`;
  });
  es.onerror = () => {
    es.close();
    if (logSource === es) {
      logSource = null;
      logKey = '';
    }
  };
}

// ---------- live ----------
let mode = 'live';
function live() {
  const es = new EventSource('/api/events');
  es.addEventListener('init', (e) => {
    model = JSON.parse(e.data);
    dirty = true;
    $('status').textContent = 'live';
    $('status').className = 'pill live';
    openLogs();
  });
  es.addEventListener('records', (e) => {
    for (const r of JSON.parse(e.data)) applyRecord(model, r);
    dirty = true;
    if (logKey.split('|')[0] !== String(currentAlloc())) openLogs();
  });
  es.onerror = () => {
    $('status').textContent = es.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting';
    $('status').className = 'pill down';
  };
}

// ---------- replay ----------
async function replay() {
  const rec = await (await fetch('/api/recording')).json();
  const records = rec.records;
  const unbounded = { timeline: Infinity, endedActors: Infinity, destroyedAllocs: Infinity };
  // Checkpoints every 500 records make dragging backwards cheap.
  const every = 500;
  const checkpoints = [emptyModel(unbounded)];
  let m = emptyModel(unbounded);
  for (let i = 0; i < records.length; i++) {
    applyRecord(m, records[i]);
    if ((i + 1) % every === 0) checkpoints.push(structuredClone(m));
  }
  const at = (n) => {
    const base = structuredClone(checkpoints[Math.floor(n / every)]);
    for (let i = Math.floor(n / every) * every; i < n; i++) applyRecord(base, records[i]);
    return base;
  };
  const slider = $('slider');
  slider.max = String(records.length);
  const show = (n) => {
    slider.value = String(n);
    model = at(n);
    const t0 = records[0]?.t ?? 0;
    $('position').textContent =
      `${n}/${records.length} · +${(((records[n - 1]?.t ?? t0) - t0) / 1000).toFixed(3)} s${rec.complete ? '' : ' · recording cut short'}`;
    dirty = true;
  };
  slider.addEventListener('input', () => show(Number(slider.value)));
  let timer = null;
  $('play').addEventListener('click', () => {
    if (timer) {
      clearInterval(timer);
      timer = null;
      $('play').textContent = '▶';
      return;
    }
    if (Number(slider.value) >= records.length) show(0);
    $('play').textContent = '❚❚';
    timer = setInterval(() => {
      const n = Math.min(records.length, Number(slider.value) + Math.max(1, Math.ceil(records.length / 300)));
      show(n);
      if (n >= records.length) {
        clearInterval(timer);
        timer = null;
        $('play').textContent = '▶';
      }
    }, 50);
  });
  $('replay').hidden = false;
  $('status').textContent = `${records.length} records`;
  $('status').className = 'pill live';
  $('log').textContent = 'logs are not recorded: open a live viewer (berth demo --view, berth run --view) to follow them';
  show(records.length);
}

// ---------- start ----------
async function main() {
  const info = await (await fetch('/api/info')).json();
  mode = info.mode;
  $('mode').textContent = info.mode === 'live' ? 'live' : `replay: ${info.title}`;
  charts = await (await fetch('/api/charts')).json();
  drawChart($('alloc-chart'), charts.alloc);
  drawChart($('task-chart'), charts.task);
  if (mode === 'live') live();
  else await replay();
  dirty = true;
  requestAnimationFrame(frame);
}
main().catch((e) => {
  $('status').textContent = `error: ${e.message}`;
  $('status').className = 'pill down';
});
// Exposed for tests and the curious: the model the page shows.
window.berthViewer = {
  get model() {
    return model;
  },
  foldRecords,
};
