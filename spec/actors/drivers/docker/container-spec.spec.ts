/**
 * What a docker task's config becomes on the Engine: the body of the container create and the
 * plugin's rules, as pure functions of the task's config (no Engine needed).
 */
import { expect } from 'chai';
import type Dockerode from 'dockerode';
import { PassThrough } from 'node:stream';
import { checkPluginRules, createOptions, LABEL_ALLOC_ID } from '../../../../actors/drivers/docker/container-spec.ts';
import { createDockerDriver } from '../../../../actors/drivers/docker/docker-driver.ts';
import { ensureImage } from '../../../../actors/drivers/docker/images.ts';
import { PluginConfigError, readPlugins } from '../../../../agent/config/plugins.ts';
import { defaultDockerPluginConfig, type DockerPluginConfig } from '../../../../actors/drivers/docker/plugin-config.ts';
import type { TaskConfig } from '../../../../actors/drivers/driver.ts';
import { DriverConfigError } from '../../../../model/errors.ts';
import type { DockerTaskConfigInput } from '../../../../model/schema/docker-config.ts';
import type { Resources } from '../../../../model/types.ts';

const ALLOC = '0000000a-0000-4000-8000-000000000000';

/** A docker task's config with its dirs under /data/alloc/<id>, and the env a port `http` gives. */
function config(resources: Resources = {}, env: Record<string, string> = {}): TaskConfig {
  const dir = `/data/alloc/${ALLOC}`;
  return {
    id: `${ALLOC}/web/0`,
    allocId: ALLOC,
    taskName: 'web',
    task: { name: 'web', driver: 'docker', config: {}, resources },
    env: {
      NOMAD_JOB_NAME: 'shop',
      NOMAD_GROUP_NAME: 'front',
      NOMAD_HOST_PORT_http: '25000',
      NOMAD_HOST_IP_http: '10.0.0.5',
      NOMAD_PORT_http: '25000',
      NOMAD_CPU_MHZ_PER_CORE: '2000',
      ...env,
    },
    taskDir: { dir: `${dir}/web`, localDir: `${dir}/web/local`, secretsDir: `${dir}/web/secrets`, privateDir: `${dir}/web/private`, tmpDir: `${dir}/web/tmp` },
    allocDir: { dir, sharedDir: `${dir}/alloc`, logsDir: `${dir}/alloc/logs` },
    logs: { maxFiles: 10, maxFileSizeMB: 10 },
    stateDir: '/data/state',
  };
}

const plugin = (over: Partial<DockerPluginConfig> = {}): DockerPluginConfig => ({ ...defaultDockerPluginConfig(), ...over });
const create = (cfg: Partial<DockerTaskConfigInput>, c = config(), p = plugin(), cpuset?: number[]) =>
  createOptions(c, { image: 'redis', ...cfg } as DockerTaskConfigInput, p, cpuset);

describe('docker: the container a task config becomes', () => {
  it('command, args, entrypoint, work_dir, hostname and labels go to the same fields; the name is <task>-<alloc id>; labels add the alloc id and extra_labels', () => {
    const o = create(
      { command: 'redis-server', args: ['--port', '6379'], entrypoint: ['/bin/sh', '-c'], work_dir: '/srv', hostname: 'cache', labels: { team: 'a' } },
      config(),
      plugin({ extraLabels: ['job_name', 'task*'] }),
    );
    expect(o).to.include({ name: `web-${ALLOC}`, Image: 'redis:latest', WorkingDir: '/srv', Hostname: 'cache' });
    expect(o.Cmd).to.deep.equal(['redis-server', '--port', '6379']);
    expect(o.Entrypoint).to.deep.equal(['/bin/sh', '-c']);
    expect(o.Labels).to.deep.equal({
      team: 'a',
      [LABEL_ALLOC_ID]: ALLOC,
      'com.hashicorp.nomad.job_name': 'shop',
      'com.hashicorp.nomad.task_group_name': 'front',
      'com.hashicorp.nomad.task_name': 'web',
    });
  });

  it("ports publish the group's port label on its host IP and host port, to port_map's port or the same one; network_mode host publishes nothing", () => {
    expect(create({ ports: ['http'] }).HostConfig!.PortBindings).to.deep.equal({
      '25000/tcp': [{ HostIp: '10.0.0.5', HostPort: '25000' }],
      '25000/udp': [{ HostIp: '10.0.0.5', HostPort: '25000' }],
    });
    const mapped = create({ port_map: { http: 6379 } });
    expect(mapped.HostConfig!.PortBindings).to.have.keys('6379/tcp', '6379/udp');
    expect(mapped.ExposedPorts).to.have.keys('6379/tcp', '6379/udp');
    const host = create({ ports: ['http'], network_mode: 'host' });
    expect(host.HostConfig!.PortBindings).to.equal(undefined);
    expect(host.HostConfig!.NetworkMode).to.equal('host');
    expect(create({}).HostConfig!.NetworkMode).to.equal('bridge');
  });

  it('dns, extra_hosts, ulimit, shm_size, sysctl, init, pid_mode, ipc_mode, readonly_rootfs, oom_score_adj, pids_limit and logging go to the same fields; healthchecks disable is NONE', () => {
    const o = create({
      dns_servers: ['1.1.1.1'],
      dns_search_domains: ['lan'],
      dns_options: ['ndots:1'],
      extra_hosts: ['db:10.0.0.9'],
      ulimit: { nofile: '1024:2048' },
      shm_size: 1 << 20,
      sysctl: { 'net.core.somaxconn': '512' },
      init: true,
      pid_mode: 'host',
      ipc_mode: 'host',
      readonly_rootfs: true,
      oom_score_adj: 100,
      pids_limit: 50,
      logging: { type: 'json-file', config: { 'max-size': '10m' } },
      healthchecks: { disable: true },
    } as Partial<DockerTaskConfigInput>);
    expect(o.HostConfig).to.deep.include({
      Dns: ['1.1.1.1'],
      DnsSearch: ['lan'],
      DnsOptions: ['ndots:1'],
      ExtraHosts: ['db:10.0.0.9'],
      Ulimits: [{ Name: 'nofile', Soft: 1024, Hard: 2048 }],
      ShmSize: 1 << 20,
      Sysctls: { 'net.core.somaxconn': '512' },
      Init: true,
      PidMode: 'host',
      IpcMode: 'host',
      ReadonlyRootfs: true,
      OomScoreAdj: 100,
      PidsLimit: 50,
      LogConfig: { Type: 'json-file', Config: { 'max-size': '10m' } },
    });
    expect(o.Healthcheck).to.deep.equal({ Test: ['NONE'] });
  });

  it("alloc/, the task's local/ and secrets/ are bound at /alloc, /local and /secrets, and the NOMAD_* dirs name those paths", () => {
    const o = create({});
    const dir = `/data/alloc/${ALLOC}`;
    expect(o.HostConfig!.Binds).to.deep.equal([`${dir}/alloc:/alloc`, `${dir}/web/local:/local`, `${dir}/web/secrets:/secrets`]);
    expect(o.Env).to.include.members(['NOMAD_ALLOC_DIR=/alloc', 'NOMAD_TASK_DIR=/local', 'NOMAD_SECRETS_DIR=/secrets', 'NOMAD_JOB_NAME=shop']);
  });

  it('volumes and bind mounts resolve relative paths under the task dir; a host path outside it only with volumes enabled', () => {
    const dir = `/data/alloc/${ALLOC}/web`;
    const o = create({
      volumes: ['local/conf:/etc/app:ro'],
      mount: [{ type: 'bind', source: 'local/data', target: '/data' }],
    } as Partial<DockerTaskConfigInput>);
    expect(o.HostConfig!.Binds).to.include(`${dir}/local/conf:/etc/app:ro`);
    expect(o.HostConfig!.Mounts![0]).to.include({ Type: 'bind', Source: `${dir}/local/data`, Target: '/data' });
    const outside = { image: 'redis', volumes: ['/etc:/host-etc'] } as DockerTaskConfigInput;
    expect(() => checkPluginRules(config(), outside, plugin())).to.throw(DriverConfigError, /volumes are not enabled on this client.*cannot mount \/etc/);
    expect(() => checkPluginRules(config(), outside, plugin({ volumesEnabled: true }))).to.not.throw();
    expect(() => checkPluginRules(config(), { image: 'redis', volumes: ['local/x:/x'] } as DockerTaskConfigInput, plugin())).to.not.throw();
  });

  it('privileged only with allow_privileged; cap_add only within allow_caps', () => {
    const priv = { image: 'redis', privileged: true } as DockerTaskConfigInput;
    expect(() => checkPluginRules(config(), priv, plugin())).to.throw(DriverConfigError, /privileged mode is disabled/);
    expect(() => checkPluginRules(config(), priv, plugin({ allowPrivileged: true }))).to.not.throw();
    const caps = { image: 'redis', cap_add: ['net_admin'] } as DockerTaskConfigInput;
    expect(() => checkPluginRules(config(), caps, plugin())).to.throw(DriverConfigError, /cap_add: net_admin not allowed/);
    expect(() => checkPluginRules(config(), caps, plugin({ allowCaps: ['CAP_NET_ADMIN'] }))).to.not.throw();
    expect(create({ cap_add: ['net_admin'], cap_drop: ['all'], security_opt: ['no-new-privileges'] }).HostConfig).to.deep.include({
      Privileged: false,
      CapAdd: ['net_admin'],
      CapDrop: ['all'],
      SecurityOpt: ['no-new-privileges'],
    });
  });

  it('cpu is CPU shares, cores a cpuset, cpu_hard_limit a CFS quota of the task share; memory is a limit with no swap', () => {
    const o = create({ cpu_hard_limit: true }, config({ cpu: 500, memoryMB: 256 }), plugin(), [2, 3]);
    const MiB = 1024 * 1024;
    expect(o.HostConfig).to.deep.include({ CpuShares: 500, CpusetCpus: '2,3', CpuPeriod: 100_000, CpuQuota: 25_000, Memory: 256 * MiB, MemorySwap: 256 * MiB });
    expect(create({ cpu_hard_limit: true, cpu_cfs_period: 50_000 }, config({ cpu: 500 })).HostConfig).to.deep.include({ CpuPeriod: 50_000, CpuQuota: 12_500 });
    expect(create({}, config({ cpu: 500 })).HostConfig!.CpuQuota).to.equal(undefined);
  });
});

/**
 * An Engine (the far side of dockerode) that has `have` images and pulls any other, refusing a
 * pull that carries credentials when `refuseAuth`; each pull's credentials are kept.
 */
function fakeEngine(have: string[], refuseAuth: boolean) {
  const pulls: Array<Record<string, string> | undefined> = [];
  const images = new Set(have);
  const engine = {
    getImage: (ref: string) => ({
      inspect: async () => {
        if (!images.has(ref)) throw Object.assign(new Error('no such image'), { statusCode: 404 });
        return { Id: `sha256:${ref}` };
      },
    }),
    createImage: async (opts: { fromImage: string; tag: string; authconfig?: Record<string, string> }) => {
      pulls.push(opts.authconfig);
      if (opts.authconfig && refuseAuth) throw new Error('unauthorized: bad credentials');
      images.add(`${opts.fromImage}:${opts.tag}`);
      const out = new PassThrough();
      out.end();
      return out;
    },
    modem: { followProgress: (_s: unknown, done: (err: Error | null) => void) => queueMicrotask(() => done(null)) },
  };
  return { engine: engine as unknown as Dockerode, pulls };
}

describe('docker: getting the image', () => {
  const opts = (events: string[]) => ({ activityMs: 1000, emit: (m: string) => void events.push(m), signal: new AbortController().signal });

  it('an image the Engine has is used as it is; a missing one, or any with force_pull, is pulled with a "Downloading image" event', async () => {
    const events: string[] = [];
    const { engine, pulls } = fakeEngine(['redis:7'], false);
    expect(await ensureImage(engine, config(), { image: 'redis:7' } as DockerTaskConfigInput, opts(events))).to.equal('sha256:redis:7');
    expect(pulls).to.have.length(0);
    await ensureImage(engine, config(), { image: 'redis:7', force_pull: true } as DockerTaskConfigInput, opts(events));
    expect(await ensureImage(engine, config(), { image: 'nginx' } as DockerTaskConfigInput, opts(events))).to.equal('sha256:nginx:latest');
    expect(pulls).to.have.length(2);
    expect(events).to.deep.equal(['Downloading image', 'Downloading image']);
  });

  it('a failed authenticated pull fails the start, unless auth_soft_fail: then it is pulled again without credentials', async () => {
    const auth = { username: 'u', password: 'p' };
    const hard = fakeEngine([], true);
    let err: unknown;
    await ensureImage(hard.engine, config(), { image: 'private/app', auth } as DockerTaskConfigInput, opts([])).catch((e) => (err = e));
    expect((err as Error).message).to.match(/failed to pull image private\/app:latest: unauthorized/);
    const soft = fakeEngine([], true);
    const id = await ensureImage(soft.engine, config(), { image: 'private/app', auth, auth_soft_fail: true } as DockerTaskConfigInput, opts([]));
    expect(id).to.equal('sha256:private/app:latest');
    expect(soft.pulls).to.deep.equal([{ ...auth, serveraddress: '' }, undefined]);
  });
});

describe('docker: what is refused, what is ignored', () => {
  it('a task config key berth does not know is refused with the closest known one; interactive and tty by name', () => {
    const d = createDockerDriver();
    const refusal = (config: Record<string, unknown>) => {
      try {
        d.validateConfig({ name: 't', driver: 'docker', config: { image: 'x', ...config } });
      } catch (e) {
        expect(e).to.be.instanceOf(DriverConfigError);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(refusal({ imagee: 1 })).to.equal('task "t": imagee: unknown field "imagee" (did you mean "image"?)');
    expect(refusal({ interactive: true })).to.match(/^task "t": interactive: interactive is not supported: berth runs containers without a terminal/);
    expect(refusal({ tty: true })).to.match(/^task "t": tty: tty is not supported/);
  });

  it('plugin keys berth does not use are accepted and ignored; a known key with a wrong type is refused naming it', () => {
    const docker = (config: unknown) => readPlugins([{ docker: [{ config: [config] }] }]).docker;
    expect(docker({ infra_image: 'pause:3', logging: [{ type: 'journald' }], auth: [{ helper: 'ecr' }], allow_privileged: true })).to.deep.equal({
      allowPrivileged: true,
    });
    expect(() => docker({ allow_privileged: 'yes' })).to.throw(PluginConfigError, /allow_privileged/);
  });
});
