/**
 * The node as Nomad's fingerprinters name it: the attribute map from what the host read says
 * (Go's architecture names, per-core frequency, one `driver.<name>` per driver), os-release
 * parsing, and CPU and memory from /proc's text; the host's files read from a temp dir laid out
 * as `/` (real files), and from this host.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { NOMAD_API_VERSION, nodeAttributes, parseOsRelease, readHost, type HostFacts } from '../../../agent/config/fingerprint.ts';
import { readHostFile } from '../../../agent/config/host-file.ts';
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
    expect(parseOsRelease('ID=arch\n# ID=commented\n#VERSION_ID=1\n'), 'a commented-out line is not read').to.deep.equal({ ID: 'arch' });
    expect(parseOsRelease('A=say "hi"\nB="a" b\n'), 'only a value quoted whole loses its quotes').to.deep.equal({ A: 'say "hi"', B: '"a" b' });
  });

  it('reads this host: kernel name in lower case, a version, a hostname, the distribution of /etc/os-release', () => {
    const h = readHost();
    expect(h.kernelName).to.equal('linux');
    expect(h.kernelVersion).to.not.equal('');
    expect(h.hostname).to.not.equal('');
    expect(h.osName).to.equal(parseOsRelease(readFileSync('/etc/os-release', 'utf8')).ID);
    expect(readHost('/')).to.deep.equal(h);
  });

  it('CPU: every core’s MHz summed, rounded down; memory: MemTotal in MB; the OS’s numbers without /proc', () => {
    expect(detectCpuMHz('processor\t: 0\ncpu MHz\t\t: 1000.9\nprocessor\t: 1\ncpu MHz\t\t: 1000.2\n')).to.equal(2001);
    expect(detectCpuMHz('cpu MHz:1500\n'), 'no space around the colon').to.equal(1500);
    expect(detectCpuMHz('cpu MHz : 2000\nbogus cpu MHz : 9000\n'), 'only a line that starts with cpu MHz').to.equal(2000);
    // os.cpus() gives 0 for a speed it does not know, counted as 1000; a real core is never
    // below 100 MHz, and counting each core as 1 MHz would be.
    expect(detectCpuMHz('processor\t: 0\n')).to.be.at.least(100 * cpus().length);
    expect(detectMemoryMB('MemFree: 1 kB\nMemTotal:   2097152 kB\n')).to.equal(2048);
    expect(detectMemoryMB('MemTotal: 1048576kB\n'), 'no space before kB').to.equal(1024);
    expect(detectMemoryMB('XMemTotal: 4096 kB\nMemTotal: 2048 kB\n'), 'only a line that starts with MemTotal').to.equal(2);
    expect(detectMemoryMB('')).to.equal(Math.floor(totalmem() / (1024 * 1024)));
  });
});

describe('agent config: the host’s files, read from a root laid out as /', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'berth-hostroot-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));
  const put = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const CPUINFO = 'processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.60GHz\ncpu MHz\t\t: 2600.000\n';

  it('a file that cannot be read is an empty text', () => {
    put('etc/os-release', 'ID=x\n');
    expect(readHostFile(join(root, 'etc/os-release'))).to.equal('ID=x\n');
    expect(readHostFile(join(root, 'etc/none'))).to.equal('');
    expect(readHostFile(join(root, 'etc')), 'a dir').to.equal('');
  });

  it('Debian: its id, the point release of /etc/debian_version, the CPU model', () => {
    put('etc/os-release', 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\nVERSION_ID="12"\n');
    put('etc/debian_version', '12.5\n');
    put('proc/cpuinfo', CPUINFO + '\n' + CPUINFO.replace('processor\t: 0', 'processor\t: 1'));
    expect(readHost(root)).to.include({ osName: 'debian', osVersion: '12.5', cpuModel: 'Intel(R) Xeon(R) CPU @ 2.60GHz' });
  });

  it('Debian testing: a codename in /etc/debian_version is no version, os-release’s stands', () => {
    put('etc/os-release', 'ID=debian\nVERSION_ID="13"\n');
    put('etc/debian_version', 'trixie/sid 13\n');
    expect(readHost(root).osVersion).to.equal('13');
    rmSync(join(root, 'etc/debian_version'));
    expect(readHost(root).osVersion, 'no /etc/debian_version').to.equal('13');
  });

  it('another distribution: os-release’s VERSION_ID, whatever /etc/debian_version says; none without one', () => {
    put('etc/os-release', 'ID=ubuntu\nVERSION_ID="24.04"\n');
    put('etc/debian_version', '13.0\n');
    expect(readHost(root)).to.include({ osName: 'ubuntu', osVersion: '24.04' });
    put('etc/os-release', 'ID=arch\nBUILD_ID=rolling\n');
    expect(readHost(root)).to.include({ osName: 'arch', osVersion: '' });
  });

  it('no os-release: the kernel’s name, no version; no model name line (ARM): no CPU model', () => {
    put('proc/cpuinfo', 'processor\t: 0\nBogoMIPS\t: 48.00\nCPU implementer\t: 0x41\n');
    const h = readHost(root);
    expect(h).to.include({ osName: h.kernelName, osVersion: '', cpuModel: '' });
    expect(h.osName).to.equal('linux');
  });

  it('the CPU model: trailing spaces trimmed, no space needed around the colon, only a line that starts with model name', () => {
    put('proc/cpuinfo', 'flags\t\t: fpu model name : vme\nmodel name\t: AMD Ryzen 7 5800X 8-Core Processor            \n');
    expect(readHost(root).cpuModel).to.equal('AMD Ryzen 7 5800X 8-Core Processor');
    put('proc/cpuinfo', 'model name:Some CPU\n');
    expect(readHost(root).cpuModel).to.equal('Some CPU');
  });

  it('CPU and memory from the proc dir given, the OS’s numbers when its files are missing', () => {
    put('proc/cpuinfo', CPUINFO + '\n' + CPUINFO);
    put('proc/meminfo', 'MemTotal:        4194304 kB\nMemFree: 1 kB\n');
    expect(detectCpuMHz(undefined, join(root, 'proc'))).to.equal(5200);
    expect(detectMemoryMB(undefined, join(root, 'proc'))).to.equal(4096);
    expect(detectCpuMHz(undefined, join(root, 'none'))).to.equal(detectCpuMHz(''));
    expect(detectMemoryMB(undefined, join(root, 'none'))).to.equal(Math.floor(totalmem() / (1024 * 1024)));
  });
});
