/**
 * The agent's configuration: Nomad's agent HCL (and JSON) read into one config, files merged in
 * order and flags on top, the default home, and errors that name the key.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent } from '../../agent/agent.ts';
import { http } from '../support/agent.ts';
import { AgentConfigError, defaultDataDir, loadAgentConfigFile, resolveAgentConfig } from '../../agent/config/config.ts';
import { detectCpuMHz, detectMemoryMB } from '../../agent/config/node-resources.ts';

describe('agent: configuration', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-agent-config-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it("reads Nomad's agent HCL: data dir, ports, client limits, reserved, chroot_env, gc, preemption, acl, tls", async () => {
    const p = await loadAgentConfigFile(
      file(
        'agent.hcl',
        `data_dir  = "/srv/berth"
bind_addr = "0.0.0.0"
ports { http = 4747 }
client {
  enabled           = true
  cpu_total_compute = 1000
  memory_total_mb   = 2048
  gc_interval       = "30s"
  gc_max_allocs     = 10
  servers           = ["10.0.0.1:4646"]
  reserved {
    cpu    = 100
    memory = 64
  }
  chroot_env = {
    "/bin" = "/bin"
  }
}
server {
  enabled = true
  default_scheduler_config {
    preemption_config {
      service_scheduler_enabled = true
    }
  }
}
acl {
  enabled = true
}
consul {
  address = "ignored:8500"
}
`,
      ),
    );
    const cfg = resolveAgentConfig([p], {});
    expect(cfg.dataDir).to.equal('/srv/berth');
    expect([cfg.bindAddr, cfg.httpPort]).to.deep.equal(['0.0.0.0', 4747]);
    expect(cfg.client).to.deep.include({
      cpuTotalCompute: 1000,
      memoryTotalMB: 2048,
      gcIntervalMs: 30_000,
      gcMaxAllocs: 10,
      chrootEnv: { '/bin': '/bin' },
      servers: ['http://10.0.0.1:4646'],
    });
    expect(cfg.client.reserved).to.deep.equal({ cpu: 100, memoryMB: 64, diskMB: 0 });
    expect(cfg.preemption).to.deep.equal({
      serviceSchedulerEnabled: true,
      batchSchedulerEnabled: false,
      sysbatchSchedulerEnabled: false,
      systemSchedulerEnabled: true,
    });
    expect(cfg.acl.enabled).to.equal(true);
  });

  it('merges files in order and puts flags last; JSON files too', async () => {
    const a = await loadAgentConfigFile(file('a.hcl', 'ports { http = 1 }\nacl { enabled = true }\n'));
    const b = await loadAgentConfigFile(file('b.json', JSON.stringify({ ports: { http: 2 }, data_dir: '/from/b' })));
    const cfg = resolveAgentConfig([a, b], { port: 3, dataDir: '/from/flag' });
    expect([cfg.httpPort, cfg.dataDir, cfg.acl.enabled]).to.deep.equal([3, '/from/flag', true]);
  });

  it('reads plugin "docker" and plugin "raw_exec" blocks, as Nomad\'s client does; wrong values name the key', async () => {
    const p = await loadAgentConfigFile(
      file(
        'plugins.hcl',
        `plugin "docker" {
  config {
    endpoint         = "unix:///run/other/docker.sock"
    allow_privileged = true
    allow_caps       = ["CAP_NET_RAW", "chown"]
    infra_image      = "ignored/by-berth:1"
    volumes {
      enabled = true
    }
    gc {
      image       = false
      image_delay = "10m"
      container   = false
      dangling_containers {
        enabled        = false
        creation_grace = "90s"
      }
    }
    pull_activity_timeout = "30s"
    extra_labels          = ["job_name", "task*"]
  }
}
plugin "raw_exec" {
  config {
    enabled = false
  }
}
`,
      ),
    );
    const cfg = resolveAgentConfig([p, { plugins: { docker: { gc: { image: true } as never } } }], { dev: true });
    expect(cfg.plugins.rawExecEnabled).to.equal(false);
    expect(cfg.plugins.docker).to.deep.equal({
      endpoint: 'unix:///run/other/docker.sock',
      allowPrivileged: true,
      allowCaps: ['net_raw', 'chown'],
      volumesEnabled: true,
      // A later file's gc keys go over the earlier's, key by key.
      gc: { image: true, imageDelayMs: 600_000, container: false, danglingContainers: false, danglingCreationGraceMs: 90_000 },
      pullActivityTimeoutMs: 30_000,
      extraLabels: ['job_name', 'task*'],
    });
    expect(resolveAgentConfig([], { dev: true }).plugins).to.deep.equal({});
    for (const [text, msg] of [
      ['plugin "docker" {\n  config {\n    allow_privileged = "yes"\n  }\n}\n', 'plugin.docker.config.allow_privileged: must be true or false, got "yes"'],
      [
        'plugin "docker" {\n  config {\n    endpoint = "/var/run/docker.sock"\n  }\n}\n',
        'plugin.docker.config.endpoint: "/var/run/docker.sock" is not unix:///path or tcp://host:port',
      ],
      ['plugin "docker" {\n  config {\n    gc {\n      image_delay = "soon"\n    }\n  }\n}\n', 'plugin.docker.config.gc.image_delay:'],
      ['plugin "docker" {\n  config {\n    allow_caps = "all"\n  }\n}\n', 'plugin.docker.config.allow_caps: must be a list of strings'],
    ] as const) {
      const err = await loadAgentConfigFile(file('bad-plugin.hcl', text)).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(AgentConfigError);
      expect((err as Error).message).to.contain(msg);
    }
  });

  it("reads the client's template block as Nomad names it; Consul and Vault settings are refused by key", async () => {
    const p = await loadAgentConfigFile(
      file(
        't.hcl',
        `client {
  template {
    function_denylist       = ["plugin"]
    disable_file_sandbox    = true
    block_query_wait        = "90s"
    max_template_event_rate = "1s"
    max_stale               = "10s"
    nomad_retry { attempts = 3 }
  }
}
`,
      ),
    );
    const cfg = resolveAgentConfig([p], { dev: true });
    expect(cfg.client.template).to.deep.equal({
      functionDenylist: ['plugin'],
      disableFileSandbox: true,
      blockQueryWaitMs: 90_000,
      maxTemplateEventRateMs: 1000,
    });
    const vault = await loadAgentConfigFile(file('v.hcl', 'client {\n  template {\n    vault_retry { attempts = 1 }\n  }\n}\n')).catch((e: unknown) => e);
    expect(vault).to.be.instanceOf(AgentConfigError);
    expect(String(vault)).to.match(/client\.template\.vault_retry: not supported by berth/);
    const deny = await loadAgentConfigFile(file('d.hcl', 'client {\n  template {\n    function_denylist = "plugin"\n  }\n}\n')).catch((e: unknown) => e);
    expect(String(deny)).to.match(/function_denylist: must be a list/);
  });

  it('names the key of a wrong value, and the file of a syntax error', async () => {
    const bad = file('bad.hcl', 'client {\n  cpu_total_compute = "lots"\n}\n');
    const err = await loadAgentConfigFile(bad).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(AgentConfigError);
    expect((err as Error).message).to.contain('client.cpu_total_compute: must be a non-negative number, got "lots"');
    const brokenFile = file('broken.hcl', 'client {\n');
    const broken = await loadAgentConfigFile(brokenFile).catch((e: unknown) => e);
    expect(broken).to.be.instanceOf(AgentConfigError);
    expect((broken as Error).message, 'the parser’s words, without its "parse config: "').to.satisfy((m: string) =>
      m.startsWith(`${brokenFile}: [${brokenFile}:1,8-9: Unclosed configuration block;`),
    );
    const jsonFile = file('odd.json', 'parse config: x');
    const json = await loadAgentConfigFile(jsonFile).catch((e: unknown) => e);
    expect((json as Error).message, 'a JSON error quoting the text keeps it whole').to.contain('"parse config: x"');
    const missing = await loadAgentConfigFile(join(dir, 'nope.hcl')).catch((e: unknown) => e);
    expect((missing as Error).message).to.equal(`cannot read agent config ${join(dir, 'nope.hcl')}: ENOENT`);
    expect(() => resolveAgentConfig([{ tls: { http: true } }], { dev: true })).to.throw(
      AgentConfigError,
      /tls.http = true needs tls.cert_file and tls.key_file/,
    );
  });

  it('finds a home: $BERTH_DATA_DIR, else /var/lib/berth for root, else $XDG_DATA_HOME/berth', () => {
    expect(defaultDataDir({ BERTH_DATA_DIR: '/x' }, 0)).to.equal('/x');
    expect(defaultDataDir({}, 0)).to.equal('/var/lib/berth');
    expect(defaultDataDir({ XDG_DATA_HOME: '/home/u/.data' }, 1000)).to.equal('/home/u/.data/berth');
    expect(defaultDataDir({ HOME: '/home/u' }, 1000)).to.equal('/home/u/.local/share/berth');
    expect(resolveAgentConfig([], { dev: true }).dataDir).to.equal(''); // -dev: the agent makes a temp dir
    expect(resolveAgentConfig([], {}, { BERTH_DATA_DIR: '/y' }).dataDir).to.equal('/y');
  });

  it("reads the node's CPU and memory as Nomad's fingerprinters do", () => {
    expect(detectCpuMHz('cpu MHz\t\t: 2400.000\ncpu MHz\t\t: 2400.000\n')).to.equal(4800);
    expect(detectMemoryMB('MemTotal:        8388608 kB\n')).to.equal(8192);
    expect(detectCpuMHz()).to.be.greaterThan(0);
  });

  it('reads HCL1 files as HCL2 does: a block may not close on the line of its second argument, a map with quoted keys is an attribute', async () => {
    const refused = async (name: string, text: string) => ((await loadAgentConfigFile(file(name, text)).catch((e: unknown) => e)) as Error).message;
    expect(await refused('close.hcl', 'ports {\n  http = 1\n  rpc = 2 }\n')).to.include('Missing newline after argument');
    expect(await refused('quoted.hcl', 'client {\n  chroot_env {\n    "/bin" = "/bin"\n  }\n}\n')).to.include('Argument names must not be quoted');
    expect(await loadAgentConfigFile(file('attr.hcl', 'client {\n  chroot_env = {\n    "/bin" = "/bin"\n  }\n}\n'))).to.deep.equal({
      client: { chrootEnv: { '/bin': '/bin' } },
    });
    expect(await loadAgentConfigFile(file('one.hcl', 'ports { http = 1 }\n'))).to.deep.equal({ httpPort: 1 });
  });

  it("an agent's node offers cpu_total_compute and memory_total_mb when they are set, the host's numbers when not", async function () {
    this.timeout(30_000);
    const offered = async (patches: Parameters<typeof resolveAgentConfig>[0]) => {
      const agent = await startAgent(resolveAgentConfig(patches, { dev: true, port: 0 }), { log: () => {} });
      try {
        const [stub] = (await http('GET', `${agent.url}/v1/nodes`)).json as Array<{ ID: string }>;
        const r = (await http('GET', `${agent.url}/v1/node/${stub!.ID}`)).json as {
          NodeResources: { Cpu: { CpuShares: number }; Memory: { MemoryMB: number } };
        };
        return [r.NodeResources.Cpu.CpuShares, r.NodeResources.Memory.MemoryMB];
      } finally {
        await agent.close();
      }
    };
    const set = await loadAgentConfigFile(file('limits.hcl', 'client {\n  cpu_total_compute = 1234\n  memory_total_mb = 567\n}\n'));
    expect(await offered([set])).to.deep.equal([1234, 567]);
    // The host's MHz move with its clock speed from one read to the next; its memory does not.
    const [cpu, memory] = await offered([]);
    expect(cpu).to.be.above(0);
    expect(memory).to.equal(detectMemoryMB());
  });
});
