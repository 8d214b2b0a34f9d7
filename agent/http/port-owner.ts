/**
 * Who listens on a TCP port, read from Linux's `/proc` (the socket's inode in `/proc/net/tcp*`,
 * then the process whose fd links to it), so "address already in use" can name the holder
 * instead of reading like a bug. Best effort: another user's process is visible only to root,
 * and elsewhere than Linux nothing is found.
 * @module
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { BerthError } from '../../index.ts';

/** The agent's HTTP port is taken. */
export class PortInUseError extends BerthError {
  /** `host:port` that was asked for. */
  readonly address: string;
  /** The process holding it, when found. */
  readonly holder: PortHolder | undefined;
  constructor(host: string, port: number, holder: PortHolder | undefined) {
    const who = holder ? ` by pid ${holder.pid} (${holder.command})` : ' by another process';
    super(`${host}:${port} is already in use${who}: stop it, or pick another port with -port N or ports { http = N } in the agent config`);
    this.address = `${host}:${port}`;
    this.holder = holder;
  }
}

/** A process listening on a port. */
export interface PortHolder {
  pid: number;
  /** Its command line, spaces between the arguments, cut to 120 characters. */
  command: string;
}

const LISTEN = '0A';

/** The inodes of sockets listening on `port`, from `/proc/net/tcp` and `tcp6`. */
function listeningInodes(port: number): Set<string> {
  const out = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== LISTEN) continue;
      if (f[1]!.split(':')[1] === hexPort) out.add(f[9]!);
    }
  }
  return out;
}

/** The process listening on TCP `port`, or undefined when none can be seen. */
export function portHolder(port: number): PortHolder | undefined {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to see
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && inodes.has(m[1]!)) return { pid: Number(pid), command: commandOf(pid) };
    }
  }
  return undefined;
}

function commandOf(pid: string): string {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return cmd.length > 120 ? `${cmd.slice(0, 117)}...` : cmd || '?';
  } catch {
    return '?';
  }
}
