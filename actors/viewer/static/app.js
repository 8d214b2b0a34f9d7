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
// Each chart is an SVG whose viewBox is the part of the chart in view. "focus" (the default)
// keeps the active state and as much of its neighbourhood as fits at a readable scale (labels
// of at least 11 px on screen) in view, and follows it as it moves; the wheel zooms around the
// pointer, dragging pans, "fit" shows the whole chart. Zooming or panning leaves focus mode.
const FOCUS_MIN_SCALE = 1; // state labels are 12 px and every other label 11 px at scale 1
const FOCUS_MAX_SCALE = 1.3;
const MAX_SCALE = 4;
const views = new Map(); // chart element id -> { el, chart, box, focus }

function viewOf(el) {
  return views.get(el.id);
}
function chartBounds(chart) {
  return { x: 0, y: 0, w: Math.max(1, chart.width), h: Math.max(1, chart.height) };
}
/** On-screen pixels per chart unit for the current box (the SVG keeps its aspect: "meet"). */
function scaleOf(v) {
  const cw = v.el.clientWidth || 1;
  const ch = v.el.clientHeight || 1;
  return Math.min(cw / v.box.w, ch / v.box.h);
}
function applyView(v) {
  const svg = v.el.querySelector('svg');
  if (!svg) return;
  svg.setAttribute('viewBox', `${v.box.x} ${v.box.y} ${v.box.w} ${v.box.h}`);
  v.el.classList.toggle('focus', v.focus);
  const btn = v.el.parentElement.querySelector(`[data-chart="${v.el.id}"][data-act="focus"]`);
  if (btn) btn.classList.toggle('on', v.focus);
  v.el.dataset.scale = scaleOf(v).toFixed(3);
}
/** A box of the container's shape at `scale`, centred on (cx, cy). */
function boxAt(v, cx, cy, scale) {
  const w = (v.el.clientWidth || 1) / scale;
  const h = (v.el.clientHeight || 1) / scale;
  return { x: cx - w / 2, y: cy - h / 2, w, h };
}
function fit(v) {
  v.focus = false;
  v.box = chartBounds(v.chart);
  applyView(v);
}
function rectOf(g) {
  const r = g.querySelector('rect');
  return { x: Number(r.getAttribute('x')), y: Number(r.getAttribute('y')), w: Number(r.getAttribute('width')), h: Number(r.getAttribute('height')) };
}
/** The deepest active state and its neighbours: the states its transitions come from or go to. */
function neighbourhood(v) {
  const el = v.el;
  let deepest = null;
  for (const g of el.querySelectorAll('g.st.active')) if (!deepest || g.dataset.id.length > deepest.dataset.id.length) deepest = g;
  for (const g of el.querySelectorAll('.near')) g.classList.remove('near');
  // Nothing active (a task not started yet): where it will start, the top-level initial state.
  if (!deepest) {
    deepest = [...el.querySelectorAll('g.st.initial')].find((g) => !g.dataset.id.includes('.')) ?? null;
    deepest?.classList.add('near');
  }
  if (!deepest) return null;
  const id = deepest.dataset.id;
  const boxes = [rectOf(deepest)];
  const touches = (x) => x === id || x.startsWith(`${id}.`);
  for (const t of v.chart.transitions) {
    if (!touches(t.source) && !touches(t.target)) continue;
    const other = touches(t.source) ? t.target : t.source;
    const g = el.querySelector(`g.st[data-id="${CSS.escape(other)}"]`);
    if (g) {
      g.classList.add('near');
      boxes.push(rectOf(g));
    }
    el.querySelector(`g.tr[data-id="${CSS.escape(t.id)}"]`)?.classList.add('near');
  }
  return { active: boxes[0], boxes };
}
function focusOn(v) {
  v.focus = true;
  const n = neighbourhood(v);
  if (!n) {
    // Nothing active yet: the whole chart, still following (focus applies once a state is).
    v.box = chartBounds(v.chart);
    return applyView(v);
  }
  const pad = 24;
  const x0 = Math.min(...n.boxes.map((b) => b.x)) - pad;
  const y0 = Math.min(...n.boxes.map((b) => b.y)) - pad;
  const x1 = Math.max(...n.boxes.map((b) => b.x + b.w)) + pad;
  const y1 = Math.max(...n.boxes.map((b) => b.y + b.h)) + pad;
  const cw = v.el.clientWidth || 1;
  const ch = v.el.clientHeight || 1;
  const whole = Math.min(cw / (x1 - x0), ch / (y1 - y0));
  const scale = Math.min(FOCUS_MAX_SCALE, Math.max(FOCUS_MIN_SCALE, whole));
  // The whole neighbourhood when it fits at a readable scale; else centred on the active state.
  const a = n.active;
  v.box = whole >= FOCUS_MIN_SCALE ? boxAt(v, (x0 + x1) / 2, (y0 + y1) / 2, scale) : boxAt(v, a.x + a.w / 2, a.y + a.h / 2, scale);
  applyView(v);
}
function zoom(v, factor, px, py) {
  const s = scaleOf(v);
  const min = Math.min(s, Math.min((v.el.clientWidth || 1) / v.chart.width, (v.el.clientHeight || 1) / v.chart.height));
  const next = Math.min(MAX_SCALE, Math.max(min, s * factor));
  const rect = v.el.getBoundingClientRect();
  // The chart point under the pointer stays under it.
  const fx = px === undefined ? 0.5 : (px - rect.left) / rect.width;
  const fy = py === undefined ? 0.5 : (py - rect.top) / rect.height;
  const cx = v.box.x + fx * v.box.w;
  const cy = v.box.y + fy * v.box.h;
  const w = rect.width / next;
  const h = rect.height / next;
  v.focus = false;
  v.box = { x: cx - fx * w, y: cy - fy * h, w, h };
  applyView(v);
}
function drawChart(el, chart) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('preserveAspectRatio', 'xMidYMid meet');
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
    html += `<g class="tr" data-id="${esc(t.id)}" data-source="${esc(t.source)}" data-target="${esc(t.target)}"><path d="${d}"/>${label}</g>`;
  }
  svg.innerHTML = html;
  el.replaceChildren(svg);
  const v = { el, chart, box: chartBounds(chart), focus: true };
  views.set(el.id, v);
  applyView(v);
  el.addEventListener('wheel', (e) => {
    e.preventDefault();
    zoom(v, Math.exp(-e.deltaY * 0.0015), e.clientX, e.clientY);
  });
  let drag = null;
  el.addEventListener('pointerdown', (e) => {
    drag = { x: e.clientX, y: e.clientY, box: { ...v.box }, moved: false };
    el.setPointerCapture(e.pointerId);
  });
  el.addEventListener('pointermove', (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x;
    const dy = e.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 3) return;
    drag.moved = true;
    const s = scaleOf(v);
    v.focus = false;
    v.box = { ...drag.box, x: drag.box.x - dx / s, y: drag.box.y - dy / s };
    applyView(v);
    el.classList.add('panning');
  });
  const end = () => {
    drag = null;
    el.classList.remove('panning');
  };
  el.addEventListener('pointerup', end);
  el.addEventListener('pointercancel', end);
  new ResizeObserver(() => (v.focus ? focusOn(v) : applyView(v))).observe(el);
}
/** Each chart's toolbar, the same for both charts: what a button does, its label, its tooltip. */
const CHART_TOOLS = [
  ['focus', 'focus', 'follow the active state, readable'],
  ['fit', 'fit', 'the whole chart'],
  ['in', '+', 'zoom in (or the wheel)'],
  ['out', '−', 'zoom out (or the wheel)'],
];
for (const bar of document.querySelectorAll('.chart-tools'))
  bar.innerHTML = CHART_TOOLS.map(
    ([act, label, title]) => `<button type="button" data-chart="${bar.dataset.chart}" data-act="${act}" title="${title}">${label}</button>`,
  ).join(' ');
for (const b of document.querySelectorAll('.chart-tools button')) {
  b.addEventListener('click', () => {
    const v = views.get(b.dataset.chart);
    if (!v) return;
    const act = b.dataset.act;
    if (act === 'focus') focusOn(v);
    else if (act === 'fit') fit(v);
    else zoom(v, act === 'in' ? 1.4 : 1 / 1.4);
  });
}
function highlight(el, state) {
  if (el.dataset.state === (state || '') && el.dataset.drawn) return;
  const active = activeStates(state);
  for (const g of el.querySelectorAll('g.st')) g.classList.toggle('active', active.has(g.dataset.id));
  el.dataset.state = state || '';
  el.dataset.drawn = '1';
  const v = viewOf(el);
  // Focus follows the active state; otherwise the user's zoom and pan are left alone.
  if (v) {
    if (v.focus) focusOn(v);
    else neighbourhood(v);
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
