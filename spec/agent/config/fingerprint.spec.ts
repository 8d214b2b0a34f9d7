/**
 * The node as Nomad's fingerprinters name it: the attribute map from what the host read says
 * (Go's architecture names, per-core frequency, one `driver.<name>` per driver), os-release
 * parsing, and CPU and memory from /proc's text.
 */
import { expect } from 'chai';
import { NOMAD_API_VERSION, nodeAttributes, parseOsRelease, readHost, type HostFacts } from '../../../agent/config/fingerprint.ts';
import { detectCpuMHz, detectMemoryMB } from '../../../agent/config/node-resources.ts';

const host = (over: Partial<HostFacts> = {}): HostFacts => ({
  kernelName: 'linux',
  kernelVersion: '6.1.0',
  kernelArch: 'x86_64',
  nodeArch: 'x64',
  osName: 'debian',
  osVersion: '12.5',
  cpuModel: 'Some CPU',
  hostname: 'box',
  ...over,
});

describe('agent config: the node fingerprint', () => {
  it('names every attribute as Nomad does', () => {
    expect(nodeAttributes(host(), { cpuMHz: 4801, cores: 2, memoryMB: 1024, ip: '10.0.0.5', drivers: ['exec', 'raw_exec'] })).to.deep.equal({
      'kernel.name': 'linux',
      'kernel.version': '6.1.0',
      'kernel.arch': 'x86_64',
      'os.name': 'debian',
      'os.version': '12.5',
      'cpu.arch': 'amd64',
      'cpu.numcores': '2',
      'cpu.frequency': '2400',
      'cpu.totalcompute': '4801',
      'cpu.modelname': 'Some CPU',
      'memory.totalbytes': String(1024 * 1024 * 1024),
      'unique.hostname': 'box',
      'unique.network.ip-address': '10.0.0.5',
      'nomad.version': NOMAD_API_VERSION,
      'nomad.revision': 'berth',
      'driver.exec': '1',
      'driver.raw_exec': '1',
    });
    expect(NOMAD_API_VERSION).to.equal('1.10.0');
  });

  it('Go’s names for Node’s architectures; an unknown one as it is; no cores counts as one', () => {
    const archOf = (nodeArch: string) => nodeAttributes(host({ nodeArch }), { cpuMHz: 1000, cores: 0, memoryMB: 1, ip: '', drivers: [] });
    const want: Record<string, string> = {
      x64: 'amd64',
      ia32: '386',
      arm64: 'arm64',
      arm: 'arm',
      ppc64: 'ppc64le',
      s390x: 's390x',
      riscv64: 'riscv64',
      loong64: 'loong64',
      mips: 'mips',
    };
    for (const [n, go] of Object.entries(want)) expect(archOf(n)['cpu.arch'], n).to.equal(go);
    expect(archOf('x64')['cpu.frequency']).to.equal('1000');
  });

  it('reads os-release lines, quoted or not, and nothing else', () => {
    expect(parseOsRelease('ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12"\n# comment\nlower=x\n')).to.deep.equal({
      ID: 'debian',
      VERSION_ID: '12',
      PRETTY_NAME: 'Debian GNU/Linux 12',
    });
    expect(parseOsRelease('')).to.deep.equal({});
  });

  it('reads this host: kernel name in lower case, a version, a hostname', () => {
    const h = readHost();
    expect(h.kernelName).to.equal('linux');
    expect(h.kernelVersion).to.not.equal('');
    expect(h.hostname).to.not.equal('');
    expect(h.osName).to.match(/^[a-z]/);
  });

  it('CPU: every core’s MHz summed, rounded down; memory: MemTotal in MB; the OS’s numbers without /proc', () => {
    expect(detectCpuMHz('processor\t: 0\ncpu MHz\t\t: 1000.9\nprocessor\t: 1\ncpu MHz\t\t: 1000.2\n')).to.equal(2001);
    expect(detectCpuMHz('processor\t: 0\n')).to.be.above(0);
    expect(detectMemoryMB('MemFree: 1 kB\nMemTotal:   2097152 kB\n')).to.equal(2048);
    expect(detectMemoryMB('')).to.be.above(0);
  });
});
