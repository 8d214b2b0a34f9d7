/**
 * Lays a {@link ChartGraph} out with elkjs (the Eclipse Layout Kernel, which Stately's own tools
 * use): layered, top to bottom, compound states drawn around their children. The result is in
 * absolute coordinates, so the page only draws rectangles and polylines.
 * @module
 */
import { createRequire } from 'node:module';
import type { ELK as ElkApi, ElkExtendedEdge, ElkNode } from 'elkjs/lib/elk-api.js';
import type { ChartGraph, ChartState } from './chart.ts';

/** A laid-out state: absolute box, nesting depth. */
export interface PlacedState {
  id: string;
  label: string;
  type: ChartState['type'];
  initial: boolean;
  invokes: string[];
  depth: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A laid-out transition: an absolute polyline and its label's box. */
export interface PlacedTransition {
  id: string;
  source: string;
  target: string;
  label: string;
  points: Array<[number, number]>;
  labelBox?: { x: number; y: number; w: number; h: number };
}

/** A chart ready to draw. */
export interface PlacedChart {
  id: string;
  width: number;
  height: number;
  states: PlacedState[];
  transitions: PlacedTransition[];
}

const CHAR_W = 7; // 12px sans-serif, generous
const LINE_H = 16;
const textWidth = (s: string) => Math.ceil(s.length * CHAR_W);

function stateSize(s: ChartState): { width: number; height: number } {
  const lines = [s.label, ...s.invokes.map((i) => `invoke ${i}`)];
  return { width: Math.max(60, ...lines.map(textWidth)) + 20, height: lines.length * LINE_H + 14 };
}

let elk: ElkApi | undefined;

/** elkjs's self-contained build (no worker), loaded only when a chart is first laid out. */
function loadElk(): ElkApi {
  const Ctor = createRequire(import.meta.url)('elkjs/lib/elk.bundled.js') as new () => ElkApi;
  return new Ctor();
}

/** Lays a chart out. */
export async function layoutChart(graph: ChartGraph): Promise<PlacedChart> {
  elk ??= loadElk();
  const toNode = (s: ChartState): ElkNode => {
    if (!s.children.length) return { id: s.id, ...stateSize(s) };
    const header = (1 + s.invokes.length) * LINE_H + 10;
    return {
      id: s.id,
      layoutOptions: { 'elk.padding': `[top=${header + 8},left=12,bottom=12,right=12]` },
      children: s.children.map(toNode),
    };
  };
  const edges: ElkExtendedEdge[] = graph.transitions.map((t) => ({
    id: t.id,
    sources: [t.source],
    targets: [t.target],
    labels: [{ text: t.label, width: textWidth(t.label) * 0.86 + 4, height: 14 }],
  }));
  const input: ElkNode = {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.spacing.nodeNodeBetweenLayers': '36',
      'elk.spacing.nodeNode': '28',
      'elk.spacing.edgeLabel': '4',
      'elk.edgeLabels.inline': 'false',
      'elk.padding': '[top=12,left=12,bottom=12,right=12]',
    },
    children: graph.states.map(toNode),
    edges,
  };
  const laid: ElkNode = await elk.layout(input);
  // Absolute position of every node (elk gives positions relative to the parent).
  const info = new Map<string, ChartState>();
  const index = (s: ChartState) => {
    info.set(s.id, s);
    s.children.forEach(index);
  };
  graph.states.forEach(index);
  const abs = new Map<string, { x: number; y: number }>([['root', { x: 0, y: 0 }]]);
  const states: PlacedState[] = [];
  const place = (n: ElkNode, ox: number, oy: number, depth: number) => {
    const x = ox + (n.x ?? 0);
    const y = oy + (n.y ?? 0);
    abs.set(n.id, { x, y });
    const s = info.get(n.id)!;
    states.push({ id: s.id, label: s.label, type: s.type, initial: s.initial, invokes: s.invokes, depth, x, y, w: n.width ?? 0, h: n.height ?? 0 });
    for (const c of n.children ?? []) place(c, x, y, depth + 1);
  };
  for (const c of laid.children ?? []) place(c, 0, 0, 0);
  // Edge coordinates are relative to the edge's container node (elk reports it).
  const allEdges: ElkExtendedEdge[] = [];
  const collect = (n: ElkNode) => {
    allEdges.push(...(n.edges ?? []));
    (n.children ?? []).forEach(collect);
  };
  collect(laid);
  const byId = new Map(graph.transitions.map((t) => [t.id, t]));
  const transitions: PlacedTransition[] = allEdges.map((e) => {
    const t = byId.get(e.id)!;
    const o = abs.get((e as { container?: string }).container ?? 'root') ?? { x: 0, y: 0 };
    const points: Array<[number, number]> = [];
    for (const sec of e.sections ?? []) {
      points.push([sec.startPoint.x + o.x, sec.startPoint.y + o.y]);
      for (const b of sec.bendPoints ?? []) points.push([b.x + o.x, b.y + o.y]);
      points.push([sec.endPoint.x + o.x, sec.endPoint.y + o.y]);
    }
    const l = e.labels?.[0];
    return {
      ...t,
      points,
      ...(l && l.x !== undefined ? { labelBox: { x: l.x + o.x, y: (l.y ?? 0) + o.y, w: l.width ?? 0, h: l.height ?? 0 } } : {}),
    };
  });
  return { id: graph.id, width: laid.width ?? 0, height: laid.height ?? 0, states, transitions };
}
