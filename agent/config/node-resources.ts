/**
 * What this machine offers, as Nomad's fingerprinters read it: CPU as cores × MHz from
 * /proc/cpuinfo, memory from /proc/meminfo. The agent's config may override either.
 * @module
 */
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';

/** Total CPU in MHz (every core's speed summed; 1000 MHz per core when the speed is unknown). */
export function detectCpuMHz(cpuinfo = safeRead('/proc/cpuinfo')): number {
  const speeds = [...cpuinfo.matchAll(/^cpu MHz\s*:\s*([\d.]+)/gm)].map((m) => Number(m[1]));
  if (speeds.length > 0) return Math.floor(speeds.reduce((a, b) => a + b, 0));
  return cpus().reduce((a, c) => a + (c.speed || 1000), 0);
}

/** Total memory in MB. */
export function detectMemoryMB(meminfo = safeRead('/proc/meminfo')): number {
  const m = /^MemTotal:\s*(\d+)\s*kB/m.exec(meminfo);
  return Math.floor((m ? Number(m[1]) * 1024 : totalmem()) / (1024 * 1024));
}

function safeRead(p: string): string {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return '';
  }
}
