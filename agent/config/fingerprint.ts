/**
 * This node's attributes, as Nomad's client fingerprinters name them (`kernel.name`,
 * `cpu.arch`, `driver.raw_exec`, ...): what `${attr.*}` in a constraint reads and what
 * `/v1/node/:id` serves as `Attributes`. `readHost` reads the machine (os module, /proc,
 * /etc/os-release); `nodeAttributes` turns what it read into the attribute map, purely.
 * @module
 */
import { arch, hostname, machine, release, type } from 'node:os';
import { join } from 'node:path';
import { readHostFile } from './host-file.ts';

/** What the fingerprint reads from the machine. */
export interface HostFacts {
  /** `uname -s`, lower case (`linux`). */
  kernelName: string;
  /** `uname -r`. */
  kernelVersion: string;
  /** `uname -m` (`x86_64`). */
  kernelArch: string;
  /** Node's `process.arch` (`x64`); Nomad reports Go's name for it (`amd64`). */
  nodeArch: string;
  /** The distribution's id and version (`debian`, `12.5`), from /etc/os-release. */
  osName: string;
  osVersion: string;
  cpuModel: string;
  hostname: string;
}

/** What the agent knows of its node besides the host facts. */
export interface NodeFacts {
  cpuMHz: number;
  cores: number;
  memoryMB: number;
  /** The address the node's allocs bind to (`unique.network.ip-address`). */
  ip: string;
  /** Drivers fingerprinted as detected and healthy. */
  drivers: string[];
}

/** The Nomad version whose API berth serves: what `${attr.nomad.version}` constraints compare to. */
export const NOMAD_API_VERSION = '1.10.0';

/** Go's GOARCH for Node's `process.arch`. */
const GOARCH: Record<string, string> = {
  x64: 'amd64',
  ia32: '386',
  arm64: 'arm64',
  arm: 'arm',
  ppc64: 'ppc64le',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
};

/**
 * Reads this machine's facts. `root` is where its `/etc` and `/proc` are: `/`, or a dir a spec
 * fills with such files.
 */
export function readHost(root = '/'): HostFacts {
  const osRelease = parseOsRelease(readHostFile(join(root, 'etc/os-release')));
  const id = osRelease.ID ?? type().toLowerCase();
  // As gopsutil: Debian's point release is in /etc/debian_version, not in os-release.
  const debian = id === 'debian' ? readHostFile(join(root, 'etc/debian_version')).trim() : '';
  return {
    kernelName: type().toLowerCase(),
    kernelVersion: release(),
    kernelArch: machine(),
    nodeArch: arch(),
    osName: id,
    osVersion: /^\d/.test(debian) ? debian : (osRelease.VERSION_ID ?? ''),
    cpuModel: /^model name\s*:\s*(.+)$/m.exec(readHostFile(join(root, 'proc/cpuinfo')))?.[1]?.trim() ?? '',
    hostname: hostname(),
  };
}

/** The `KEY=value` lines of an os-release file. */
export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/^([A-Z_]+)=(.*)$/gm)) out[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
  return out;
}

/** The node's attributes under Nomad's names (without the `attr.` prefix constraints add). */
export function nodeAttributes(host: HostFacts, node: NodeFacts): Record<string, string> {
  const attrs: Record<string, string> = {
    'kernel.name': host.kernelName,
    'kernel.version': host.kernelVersion,
    'kernel.arch': host.kernelArch,
    'os.name': host.osName,
    'os.version': host.osVersion,
    'cpu.arch': GOARCH[host.nodeArch] ?? host.nodeArch,
    'cpu.numcores': String(node.cores),
    'cpu.frequency': String(Math.floor(node.cpuMHz / Math.max(1, node.cores))),
    'cpu.totalcompute': String(node.cpuMHz),
    'cpu.modelname': host.cpuModel,
    'memory.totalbytes': String(node.memoryMB * 1024 * 1024),
    'unique.hostname': host.hostname,
    'unique.network.ip-address': node.ip,
    'nomad.version': NOMAD_API_VERSION,
    // Nomad's git revision; berth is not a build of Nomad, so it says so.
    'nomad.revision': 'berth',
  };
  for (const d of node.drivers) attrs[`driver.${d}`] = '1';
  return attrs;
}
