/**
 * Small file helpers for cgroupfs (tiny files, read and written whole): synchronous, and the
 * thread-pool versions for the per-task path.
 * @module
 */
import fs from 'node:fs';
import { join } from 'node:path';

/** A file's text, trimmed; undefined when it cannot be read. */
export function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** {@link readText} on the thread pool. */
export async function readTextAsync(file: string): Promise<string | undefined> {
  try {
    return (await fs.promises.readFile(file, 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** A file of one integer; undefined when unreadable or not a number ("max" included). */
export function readNumber(file: string): number | undefined {
  const t = readText(file);
  if (t === undefined || !/^\d+$/.test(t)) return undefined;
  return Number(t);
}

/** `key value` lines (memory.stat, cpu.stat, cpuacct.stat) as a map; undefined when unreadable. */
export function readKeyed(file: string): Record<string, number> | undefined {
  const t = readText(file);
  if (t === undefined) return undefined;
  const out: Record<string, number> = {};
  for (const line of t.split('\n')) {
    const [k, v] = line.split(/\s+/);
    if (k && v !== undefined && /^\d+$/.test(v)) out[k] = Number(v);
  }
  return out;
}

/** The error of a failed cgroupfs write, naming the file and value. */
function writeError(file: string, value: string | number, err: unknown): Error {
  const e = err as NodeJS.ErrnoException;
  return Object.assign(new Error(`cannot write ${JSON.stringify(String(value))} to ${file}: ${e.code ?? e.message}`), { code: e.code });
}

/** Writes `value` to `<dir>/<name>`, adding the file name to the error. */
export function writeIn(dir: string, name: string, value: string | number): void {
  const file = join(dir, name);
  try {
    fs.writeFileSync(file, String(value));
  } catch (err) {
    throw writeError(file, value, err);
  }
}

/** {@link writeIn} on the thread pool. */
export async function writeInAsync(dir: string, name: string, value: string | number): Promise<void> {
  const file = join(dir, name);
  try {
    await fs.promises.writeFile(file, String(value));
  } catch (err) {
    throw writeError(file, value, err);
  }
}
