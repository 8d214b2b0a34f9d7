/**
 * The agent file read key by key, as decoded JSON (what the HCL parser hands over, or a JSON
 * file): each key lands in its field, HCL's block lists merge in order, and a wrong value is
 * refused naming its key; then the merge of files and flags, and the checks on the result.
 */
import { expect } from 'chai';
import { AgentConfigError, DEFAULT_PREEMPTION, DEFAULT_SERVER_GC, readAgentConfig, resolveAgentConfig } from '../../../agent/config/config.ts';

const refused = (doc: unknown) => {
  try {
    readAgentConfig(doc);
  } catch (e) {
    expect(e).to.be.instanceOf(AgentConfigError);
    return (e as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(doc)}`);
};

describe('agent config: each key of the agent file', () => {
  it('an empty file sets nothing; a file that is not an object is refused', () => {
    expect(readAgentConfig({})).to.deep.equal({});
    expect(readAgentConfig({ server: [{ enabled: true }], client: [{ enabled: true }], consul: [{}] })).to.deep.equal({});
    for (const doc of [null, [], 'x', 3]) expect(refused(doc)).to.equal('agent config must be an object');
  });

  it('top-level strings and the http port; numbers given as digit strings are numbers', () => {
    expect(
      readAgentConfig({ data_dir: '/d', bind_addr: '0.0.0.0', name: 'n', region: 'r', datacenter: 'dc9', ports: [{ http: 1 }, { http: '4747' }] }),
    ).to.deep.equal({
      dataDir: '/d',
      bindAddr: '0.0.0.0',
      name: 'n',
      region: 'r',
      datacenter: 'dc9',
      httpPort: 4747,
    });
    expect(readAgentConfig({ ports: { http: 0 } })).to.deep.equal({ httpPort: 0 });
    expect(refused({ data_dir: 1 })).to.equal('data_dir: must be a string, got 1');
    expect(refused({ bind_addr: true })).to.equal('bind_addr: must be a string, got true');
    expect(refused({ region: ['a'] })).to.equal('region: must be a string, got ["a"]');
    expect(refused({ ports: 'x' })).to.equal('ports: must be a block');
    expect(refused({ ports: [{ http: -1 }] })).to.equal('ports.http: must be a non-negative number, got -1');
    expect(refused({ ports: [{ http: '4.5' }] })).to.equal('ports.http: must be a non-negative number, got "4.5"');
    expect(refused({ ports: [{ http: Infinity }] })).to.equal('ports.http: must be a non-negative number, got null');
    expect(refused({ ports: [{ http: true }] })).to.equal('ports.http: must be a non-negative number, got true');
    expect(refused({ ports: [{ http: ['4747'] }] }), 'a list is no number, even of one').to.equal('ports.http: must be a non-negative number, got ["4747"]');
    for (const key of ['client', 'server', 'acl', 'tls']) expect(refused({ [key]: 'x' }), key).to.equal(`${key}: must be a block`);
  });

  it('the client block: limits, reserved (with its ports), dynamic range, meta, class, pool, servers, gc', () => {
    const p = readAgentConfig({
      client: [
        {
          cpu_total_compute: 1000,
          memory_total_mb: 512,
          reserved: [{ cpu: 10 }, { memory: 20, disk: 30, reserved_ports: '22,80-81' }],
          min_dynamic_port: 21000,
          max_dynamic_port: 22000,
          meta: [{ rack: 'r1', n: 2, on: true }],
          node_class: 'big',
          node_pool: 'gpu',
          servers: ['10.0.0.1:4646', 'https://x:4646', 'http://y', 'z:1/https://w'],
          gc_interval: '1m',
          gc_disk_usage_threshold: 80,
          gc_inode_usage_threshold: 70,
          gc_max_allocs: 50,
          gc_parallel_destroys: 2,
          chroot_env: [{ '/bin': '/bin' }, { '/etc': '/etc' }],
        },
      ],
    });
    expect(p).to.deep.equal({
      client: {
        cpuTotalCompute: 1000,
        memoryTotalMB: 512,
        reserved: { cpu: 10, memoryMB: 20, diskMB: 30, reservedPorts: '22,80-81' },
        minDynamicPort: 21000,
        maxDynamicPort: 22000,
        meta: { rack: 'r1', n: '2', on: 'true' },
        nodeClass: 'big',
        nodePool: 'gpu',
        servers: ['http://10.0.0.1:4646', 'https://x:4646', 'http://y', 'http://z:1/https://w'],
        gcIntervalMs: 60_000,
        gcDiskUsageThreshold: 80,
        gcInodeUsageThreshold: 70,
        gcMaxAllocs: 50,
        gcParallelDestroys: 2,
        chrootEnv: { '/bin': '/bin', '/etc': '/etc' },
      },
    });
    expect(readAgentConfig({ client: { reserved: {} } })).to.deep.equal({ client: { reserved: { cpu: 0, memoryMB: 0, diskMB: 0 } } });
    expect(readAgentConfig({ client: { reserved: { reserved_ports: 22 } } }).client!.reserved).to.deep.equal({
      cpu: 0,
      memoryMB: 0,
      diskMB: 0,
      reservedPorts: '22',
    });
    expect(readAgentConfig({ client: { gc_interval: 5000 } })).to.deep.equal({ client: { gcIntervalMs: 5000 } });
  });

  it('refuses a wrong client value, naming its key', () => {
    const cases: Array<[unknown, string]> = [
      [{ memory_total_mb: 'lots' }, 'client.memory_total_mb: must be a non-negative number, got "lots"'],
      [{ reserved: 'x' }, 'client.reserved: must be a block'],
      [{ reserved: { cpu: -5 } }, 'client.reserved.cpu: must be a non-negative number, got -5'],
      [{ reserved: { memory: 'm' } }, 'client.reserved.memory: must be a non-negative number, got "m"'],
      [{ reserved: { disk: 'd' } }, 'client.reserved.disk: must be a non-negative number, got "d"'],
      [{ reserved: { reserved_ports: ['22'] } }, 'client.reserved.reserved_ports: must be a string like "22,80,8000-8100", got ["22"]'],
      [{ reserved: { reserved_ports: '80-70' } }, 'client.reserved.reserved_ports: invalid range: ending value (70) less than starting (80) value'],
      [{ min_dynamic_port: 1.5 }, 'Invalid dynamic port range: min_dynamic_port=1.5'],
      [{ max_dynamic_port: 65537 }, 'Invalid dynamic port range: max_dynamic_port=65537'],
      [{ chroot_env: { '/bin': 1 } }, 'client.chroot_env./bin: must be a string'],
      [{ meta: { k: { deep: 1 } } }, 'client.meta.k: must be a string'],
      [{ meta: { k: null } }, 'client.meta.k: must be a string'],
      [{ node_class: 1 }, 'client.node_class: must be a string, got 1'],
      [{ node_pool: false }, 'client.node_pool: must be a string, got false'],
      [{ servers: 'a:1' }, 'client.servers: must be a list of addresses'],
      [{ servers: ['a', 2] }, 'client.servers: must be a list of addresses'],
      [{ gc_interval: true }, 'client.gc_interval: must be a duration like "1m"'],
      [{ gc_interval: 'soon' }, 'client.gc_interval: '],
      [{ gc_max_allocs: 'many' }, 'client.gc_max_allocs: must be a non-negative number, got "many"'],
      [{ gc_parallel_destroys: -1 }, 'client.gc_parallel_destroys: must be a non-negative number, got -1'],
      [{ gc_disk_usage_threshold: 'x' }, 'client.gc_disk_usage_threshold: must be a non-negative number, got "x"'],
      [{ gc_inode_usage_threshold: 'x' }, 'client.gc_inode_usage_threshold: must be a non-negative number, got "x"'],
      [{ template: 'x' }, 'client.template: must be a block'],
      [{ cpu_total_compute: [5] }, 'client.cpu_total_compute: must be a non-negative number, got [5]'],
      [{ min_dynamic_port: 'x' }, 'client.min_dynamic_port: must be a non-negative number, got "x"'],
      [{ max_dynamic_port: 'x' }, 'client.max_dynamic_port: must be a non-negative number, got "x"'],
      [{ chroot_env: 'x' }, 'client.chroot_env: must be a block'],
      [{ meta: 'x' }, 'client.meta: must be a block'],
    ];
    for (const [client, msg] of cases) expect(refused({ client }), msg).to.satisfy((m: string) => m.startsWith(msg));
    expect(readAgentConfig({ client: { max_dynamic_port: 65536 } }).client).to.deep.equal({ maxDynamicPort: 65536 });
  });

  it('the client template block: what it sets, what it accepts and ignores, what it refuses', () => {
    expect(
      readAgentConfig({ client: { template: [{ function_blacklist: ['env'], max_stale: '5s', nomad_retry: [{ attempts: 1 }] }] } }).client!.template,
    ).to.deep.equal({
      functionDenylist: ['env'],
    });
    expect(readAgentConfig({ client: { template: {} } }).client!.template).to.deep.equal({});
    const cases: Array<[unknown, string]> = [
      [{ consul_retry: {} }, 'client.template.consul_retry: not supported by berth (it serves no Consul or Vault data to templates)'],
      [{ function_denylist: ['a', 1] }, 'client.template.function_denylist: must be a list of function names'],
      [{ disable_file_sandbox: 'yes' }, 'client.template.disable_file_sandbox: must be true or false, got "yes"'],
      [{ block_query_wait: 'x' }, 'client.template.block_query_wait: '],
      [{ max_template_event_rate: [] }, 'client.template.max_template_event_rate: must be a duration like "1m"'],
      [{ max_stale: 'x' }, 'client.template.max_stale: '],
      [{ nomad_retry: 'x' }, 'client.template.nomad_retry: must be a block'],
      [{ wait: { min: '1s' } }, 'client.template.wait: not supported by berth yet (set wait on each template block)'],
      [{ wait_bounds: {} }, 'client.template.wait_bounds: not supported by berth yet (set wait on each template block)'],
    ];
    for (const [template, msg] of cases) expect(refused({ client: { template } }), msg).to.satisfy((m: string) => m.startsWith(msg));
  });

  it('the server block: GC thresholds as durations, and the preemption switches', () => {
    const p = readAgentConfig({
      server: [
        {
          eval_gc_threshold: '2h',
          batch_eval_gc_threshold: '48h',
          job_gc_threshold: '1h',
          deployment_gc_threshold: '30m',
          job_gc_interval: '0s',
          default_scheduler_config: [
            {
              preemption_config: [
                { service_scheduler_enabled: true, batch_scheduler_enabled: true, sysbatch_scheduler_enabled: true, system_scheduler_enabled: false },
              ],
            },
          ],
        },
      ],
    });
    expect(p).to.deep.equal({
      serverGc: {
        evalGcThresholdMs: 7_200_000,
        batchEvalGcThresholdMs: 172_800_000,
        jobGcThresholdMs: 3_600_000,
        deploymentGcThresholdMs: 1_800_000,
        jobGcIntervalMs: 0,
      },
      preemption: { serviceSchedulerEnabled: true, batchSchedulerEnabled: true, sysbatchSchedulerEnabled: true, systemSchedulerEnabled: false },
    });
    expect(readAgentConfig({ server: { job_gc_interval: 1000 } })).to.deep.equal({ serverGc: { jobGcIntervalMs: 1000 } });
    expect(refused({ server: { job_gc_threshold: -1 } })).to.equal('server.job_gc_threshold: must be a duration of 0 or more, got -1');
    expect(refused({ server: { eval_gc_threshold: NaN } })).to.equal('server.eval_gc_threshold: must be a duration of 0 or more, got null');
    expect(refused({ server: { deployment_gc_threshold: 'x' } })).to.match(/^server\.deployment_gc_threshold: /);
    expect(refused({ server: { default_scheduler_config: { preemption_config: { batch_scheduler_enabled: 1 } } } })).to.equal(
      'server.default_scheduler_config.preemption_config.batch_scheduler_enabled: must be true or false, got 1',
    );
    expect(refused({ server: { default_scheduler_config: 'x' } })).to.equal('server.default_scheduler_config: must be a block');
    expect(refused({ server: { default_scheduler_config: { preemption_config: 'x' } } })).to.equal(
      'server.default_scheduler_config.preemption_config: must be a block',
    );
  });

  it('http_allowed_origins: origins as a browser writes them; anything else refused by index', () => {
    expect(readAgentConfig({ http_allowed_origins: ['HTTPS://Ops.Example:443/', 'http://a:8080'] })).to.deep.equal({
      httpAllowedOrigins: ['https://ops.example', 'http://a:8080'],
    });
    expect(readAgentConfig({ http_allowed_origins: [] })).to.deep.equal({ httpAllowedOrigins: [] });
    expect(refused({ http_allowed_origins: 'https://a' })).to.equal('http_allowed_origins: must be a list of origins like "https://ops.example"');
    for (const bad of ['https://a/path', 'ftp://a', 'https://', 1, 'https://a?q', 'https://[::1', ['https://a'], 'ws://https://a'])
      expect(refused({ http_allowed_origins: ['https://ok', bad] }), String(bad)).to.equal(
        `http_allowed_origins[1]: ${JSON.stringify(bad)} is not an origin (scheme://host[:port], no path)`,
      );
  });

  it('acl and tls blocks; a bad plugin block is an agent config error naming the key', () => {
    expect(readAgentConfig({ acl: [{ enabled: false }] })).to.deep.equal({ acl: { enabled: false } });
    expect(readAgentConfig({ acl: {} })).to.deep.equal({});
    expect(readAgentConfig({ tls: [{ http: true, verify_https_client: true, ca_file: 'ca', cert_file: 'c', key_file: 'k' }] })).to.deep.equal({
      tls: { http: true, verifyHttpsClient: true, caFile: 'ca', certFile: 'c', keyFile: 'k' },
    });
    expect(readAgentConfig({ tls: {} })).to.deep.equal({ tls: {} });
    expect(refused({ acl: { enabled: 'yes' } })).to.equal('acl.enabled: must be true or false, got "yes"');
    expect(refused({ tls: { http: 1 } })).to.equal('tls.http: must be true or false, got 1');
    expect(refused({ tls: { verify_https_client: 'no' } })).to.equal('tls.verify_https_client: must be true or false, got "no"');
    expect(refused({ tls: { cert_file: 1 } })).to.equal('tls.cert_file: must be a string, got 1');
    expect(refused({ plugin: [{ raw_exec: [{ config: [{ enabled: 'no' }] }] }] })).to.equal('plugin.raw_exec.config.enabled: must be true or false, got "no"');
    expect(readAgentConfig({ plugin: [{ raw_exec: [{ config: [{ enabled: true }] }] }] })).to.deep.equal({ plugins: { rawExecEnabled: true } });
    expect(readAgentConfig({ plugin: [{ exec: [{ config: [{}] }] }] }), 'a plugin berth has no keys for').to.deep.equal({});
  });
});

describe('agent config: files and flags merged, and the result checked', () => {
  it('the defaults, Nomad’s', () => {
    expect(resolveAgentConfig([], { dev: true })).to.deep.equal({
      dev: true,
      repairState: false,
      dataDir: '',
      bindAddr: '127.0.0.1',
      httpPort: 4646,
      name: 'berth',
      region: 'global',
      datacenter: 'dc1',
      client: { reserved: { cpu: 0, memoryMB: 0, diskMB: 0 } },
      preemption: DEFAULT_PREEMPTION,
      serverGc: DEFAULT_SERVER_GC,
      acl: { enabled: false },
      tls: { http: false, verifyHttpsClient: false },
      httpAllowedOrigins: [],
      plugins: {},
    });
    expect(DEFAULT_SERVER_GC).to.deep.equal({
      evalGcThresholdMs: 3_600_000,
      batchEvalGcThresholdMs: 86_400_000,
      jobGcThresholdMs: 14_400_000,
      deploymentGcThresholdMs: 3_600_000,
      jobGcIntervalMs: 300_000,
    });
    expect(resolveAgentConfig([], { repairState: true, dev: false }, { BERTH_DATA_DIR: '/h' })).to.include({ dev: false, repairState: true, dataDir: '/h' });
  });

  it('a later file sets only what it says, block by block; flags go last', () => {
    const cfg = resolveAgentConfig(
      [
        {
          client: { gcMaxAllocs: 5, nodeClass: 'a' },
          serverGc: { jobGcIntervalMs: 1 },
          preemption: { serviceSchedulerEnabled: true },
          acl: { enabled: true },
          tls: { caFile: 'ca' },
          name: 'one',
        },
        {
          client: { nodeClass: 'b' },
          serverGc: { evalGcThresholdMs: 2 },
          preemption: { batchSchedulerEnabled: true },
          tls: { verifyHttpsClient: true },
          plugins: { rawExecEnabled: false },
        },
        { plugins: { docker: { endpoint: 'unix:///x' } } },
      ],
      { dev: true, bindAddr: '0.0.0.0', port: 0, dataDir: '/flag' },
    );
    expect(cfg.client).to.deep.equal({ reserved: { cpu: 0, memoryMB: 0, diskMB: 0 }, gcMaxAllocs: 5, nodeClass: 'b' });
    expect(cfg.serverGc).to.deep.equal({ ...DEFAULT_SERVER_GC, jobGcIntervalMs: 1, evalGcThresholdMs: 2 });
    expect(cfg.preemption).to.deep.equal({ ...DEFAULT_PREEMPTION, serviceSchedulerEnabled: true, batchSchedulerEnabled: true });
    expect(cfg.acl).to.deep.equal({ enabled: true });
    expect(cfg.tls).to.deep.equal({ http: false, verifyHttpsClient: true, caFile: 'ca' });
    expect(cfg.plugins).to.deep.equal({ rawExecEnabled: false, docker: { endpoint: 'unix:///x', gc: {} } });
    expect([cfg.name, cfg.bindAddr, cfg.httpPort, cfg.dataDir]).to.deep.equal(['one', '0.0.0.0', 0, '/flag']);
  });

  it('refuses, on the merged result, TLS without its files, a port past 65535 and a dynamic range upside down', () => {
    expect(() => resolveAgentConfig([{ tls: { http: true, certFile: 'c' } }], { dev: true })).to.throw(
      AgentConfigError,
      'tls.http = true needs tls.cert_file and tls.key_file',
    );
    expect(() => resolveAgentConfig([{ tls: { http: true, keyFile: 'k' } }], { dev: true })).to.throw(AgentConfigError, 'tls.http = true needs');
    expect(resolveAgentConfig([{ tls: { http: true, certFile: 'c', keyFile: 'k' } }], { dev: true }).tls.http).to.equal(true);
    expect(() => resolveAgentConfig([], { dev: true, port: 65536 })).to.throw(AgentConfigError, 'ports.http: 65536 is not a port');
    expect(resolveAgentConfig([], { dev: true, port: 65535 }).httpPort).to.equal(65535);
    expect(() => resolveAgentConfig([{ client: { minDynamicPort: 30000 } }, { client: { maxDynamicPort: 25000 } }], { dev: true })).to.throw(
      AgentConfigError,
      'Invalid dynamic port range: min_dynamic_port=30000 and max_dynamic_port=25000',
    );
    expect(() => resolveAgentConfig([{ client: { minDynamicPort: 33000 } }], { dev: true })).to.throw(
      AgentConfigError,
      'min_dynamic_port=33000 and max_dynamic_port=32000',
    );
    expect(() => resolveAgentConfig([{ client: { maxDynamicPort: 19000 } }], { dev: true })).to.throw(
      AgentConfigError,
      'min_dynamic_port=20000 and max_dynamic_port=19000',
    );
    expect(resolveAgentConfig([{ client: { minDynamicPort: 25000, maxDynamicPort: 25000 } }], { dev: true }).client).to.include({
      minDynamicPort: 25000,
      maxDynamicPort: 25000,
    });
  });
});
