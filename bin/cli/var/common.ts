/**
 * What `berth var put|get|list|purge` share, as nomad's `var` commands do: the variable's API
 * shape, its path in a URL, `-check-index`, the table and JSON renderings, and the
 * check-and-set conflict message.
 * @module
 */
import type { Writable } from 'node:stream';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { ApiRequestError } from '../nomad/api.ts';
import { kv } from '../nomad/table.ts';

/** Nomad's `api.Variable` (and, without `Items`, `api.VariableMetadata`). */
export interface ApiVariable {
  Namespace: string;
  Path: string;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
  Items: Record<string, string> | null;
}

/** Nomad's `sanitizePath`: spaces and slashes trimmed from both ends. */
export const cleanPath = (p: string): string => p.trim().replace(/^\/+|\/+$/g, '');

/** `/v1/var/<path>`, each segment escaped (the slashes kept: the agent routes the rest of the path). */
export const varUrl = (path: string, query = ''): string => `/v1/var/${cleanPath(path).split('/').map(encodeURIComponent).join('/')}${query}`;

/** `-check-index`: undefined when not given, the index otherwise (a UsageError for one that is not). */
export function checkIndexFlag(command: string, value: unknown): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)))
    throw new UsageError(`Invalid -check-index value ${JSON.stringify(value)}: not parsable as uint64`, command);
  return Number(value);
}

/** Refuses nomad's wildcard namespace for a command on one variable. */
export function refuseWildcard(command: string, namespace: unknown): void {
  const ns = typeof namespace === 'string' && namespace !== '' ? namespace : process.env.NOMAD_NAMESPACE;
  if (ns === '*') throw new UsageError('The wildcard namespace ("*") is not valid for this command.', command);
}

/** Whether `stream` is a terminal (nomad picks its default output by it). */
export const isTerminal = (stream: Writable): boolean => !!(stream as { isTTY?: boolean }).isTTY;

/** nomad's time: ISO 8601 to the second (berth prints UTC). */
export function isoTime(ns: number): string {
  if (!ns || ns < 1e9) return '';
  return new Date(ns / 1e6).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** Items by key, as Go encodes a map. */
const sortedItems = (items: Record<string, string> | null) =>
  items &&
  Object.fromEntries(
    Object.keys(items)
      .sort()
      .map((k) => [k, items[k]!]),
  );

/** A variable as nomad's `-out=json` prints it (`AsPrettyJSON`: api.Variable's field order, items by key, 2 spaces). */
export function variableJson(v: ApiVariable): string {
  const { Namespace, Path, CreateIndex, ModifyIndex, CreateTime, ModifyTime, Items } = v;
  return JSON.stringify({ Namespace, Path, CreateIndex, ModifyIndex, CreateTime, ModifyTime, Items: sortedItems(Items) }, null, 2);
}

/** A variable as nomad's `-out=table` prints it: its metadata, then its items by key. */
export function variableTable(v: ApiVariable): string {
  const meta: Array<[string, unknown]> = [
    ['Namespace', v.Namespace],
    ['Path', v.Path],
    ['Create Time', isoTime(v.CreateTime)],
  ];
  if (v.CreateTime !== v.ModifyTime) meta.push(['Modify Time', isoTime(v.ModifyTime)]);
  meta.push(['Check Index', v.ModifyIndex]);
  const items = Object.keys(v.Items ?? {})
    .sort()
    .map((k): [string, unknown] => [k, v.Items![k]]);
  return `${kv(meta)}\n\nItems\n${items.length ? kv(items) : '<none>'}`;
}

/**
 * The variable a refused check-and-set met (the agent's 409 answer), or undefined for any other
 * error.
 */
export function casConflictOf(e: unknown): ApiVariable | undefined {
  if (!(e instanceof ApiRequestError) || e.status !== 409) return undefined;
  try {
    return JSON.parse(e.body) as ApiVariable;
  } catch {
    return undefined;
  }
}

/** nomad's check-and-set conflict message, on stderr (the command then exits 1). */
export function writeCasConflict(stderr: Writable, checkIndex: number, conflict: ApiVariable): void {
  const last = conflict.ModifyIndex > 0 ? `    The server-side item was last updated on ${isoTime(conflict.ModifyTime)}.\n` : '';
  writeLine(
    stderr,
    `\nCheck-and-Set conflict\n\n` +
      `    Your provided check-index (${checkIndex}) does not match the server-side index (${conflict.ModifyIndex}).\n` +
      last +
      `    If you are sure you want to perform this operation, add the -force or\n` +
      `    -check-index=${conflict.ModifyIndex} flag before the positional arguments.\n`,
  );
}
