/** The per-task shim's command line (see shim.mjs). */
export declare const SHIM_MARKER: string;
export declare const CGROUP_JOIN_FAILED: number;
export interface ShimTools {
  sh: string;
  setsid: string;
  mkfifo: string;
  mv: string;
  env: string;
}
export declare function shimCommand(o: {
  tools: ShimTools;
  specPath: string;
  statusFile: string;
  stdoutFifo: string;
  stderrFifo: string;
  cgroupProcs: string[];
  env: Record<string, string>;
  file: string;
  args: string[];
}): { file: string; argv: string[]; env: Record<string, string> };
export declare function decodeStatus(status: number): { exitCode: number; signal: number };
