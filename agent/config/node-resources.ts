/**
 * What this machine offers, as Nomad's fingerprinters read it: CPU as cores × MHz from
 * /proc/cpuinfo, memory from /proc/meminfo. The agent's config may override either.
 * @module
 */
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { readHostFile } from './host-file.ts';

/**
 * Total CPU in MHz: every core's speed in `cpuinfo` (default: `<proc>/cpuinfo`) summed; without
 * one, the OS's speeds, 1000 MHz for a core whose speed it does not know.
 */
export function detectCpuMHz(cpuinfo?: string, proc = '/proc'): number {
  const text = cpuinfo ?? readHostFile(join(proc, 'cpuinfo'));
  const speeds = [...text.matchAll(/^cpu MHz\s*:\s*([\d.]+)/gm)].map((m) => Number(m[1]));
  if (speeds.length > 0) return Math.floor(speeds.reduce((a, b) => a + b, 0));
  return cpus().reduce((a, c) => a + (c.speed || 1000), 0);
}

/** Total memory in MB: `MemTotal` of `meminfo` (default: `<proc>/meminfo`), else the OS's total. */
export function detectMemoryMB(meminfo?: string, proc = '/proc'): number {
  const m = /^MemTotal:\s*(\d+)\s*kB/m.exec(meminfo ?? readHostFile(join(proc, 'meminfo')));
  return Math.floor((m ? Number(m[1]) * 1024 : totalmem()) / (1024 * 1024));
}
