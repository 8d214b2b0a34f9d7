/**
 * The `docker` driver: each task is a container on a Docker Engine, driven through its HTTP API
 * (dockerode), as Nomad's docker driver plugin runs it. Containers outlive the host process; the
 * handle keeps the container id, so a restarted client reattaches to the same container.
 *
 * ```
 *  start ─► image (load | pull) ─► create <task>-<alloc id> ─► start ─► log pump ─► handle
 *  wait ─► POST /containers/{id}/wait ─► inspect (exit code, OOMKilled)
 *  stop ─► kill_signal, kill_timeout, then SIGKILL          destroy ─► remove (gc.container)
 * ```
 * @module
 */
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { Writable } from 'node:stream';
import Dockerode from 'dockerode';
import { BerthError, DriverConfigError, DriverStartError, TaskNotRunningError, TaskNotStartedError } from '../../../model/errors.ts';
import { errorText } from '../../../model/error-text.ts';
import { realClock, type Clock } from '../../../model/clock.ts';
import type { Task } from '../../../model/types.ts';
import { dockerConfigSchema, type DockerTaskConfigInput } from '../../../model/schema/docker-config.ts';
import { issueLines } from '../../../model/schema/issues.ts';
import { emptyUsage, type TaskResourceUsage } from '../../../model/usage.ts';
import type { Driver, DriverEventSink, DriverFingerprint, ExecOptions, ExecResult, ExitResult, TaskConfig, TaskHandle } from '../driver.ts';
import { ExecError } from '../exec-process.ts';
import { signalName } from '../signals.ts';
import { checkPluginRules, containerName, createOptions, LABEL_ALLOC_ID } from './container-spec.ts';
import { ensureImage, ImageRefs } from './images.ts';
import { startLogPump, type LogPump } from './log-pump.ts';
import { defaultDockerPluginConfig, type DockerPluginConfig } from './plugin-config.ts';

/** What the driver keeps in a task's handle. */
export interface DockerHandleState {
  containerId: string;
  imageId: string;
  cpuset?: number[];
}

/** `driver.docker` as the fingerprint finds it (health text "Healthy" or "Docker is not available"). */
export type DockerFingerprint = DriverFingerprint;

/** Options of {@link createDockerDriver}. */
export interface DockerDriverOptions {
  /** The client side config (`plugin "docker" { config { ... } }`), over Nomad's defaults. */
  plugin?: Partial<DockerPluginConfig>;
  /** Timers for image GC. */
  clock?: Clock;
  /** Errors of background work (image removal, log copies). */
  onError?: (message: string) => void;
}

/** The docker driver, with what a client does with it besides running tasks. */
export interface DockerDriver extends Driver {
  readonly plugin: DockerPluginConfig;
  /** Whether an Engine answers at the endpoint, and its attributes. */
  fingerprint(): Promise<DockerFingerprint>;
  /**
   * Removes the running containers berth's labels name whose alloc is not in `owned` and that are
   * older than the plugin's `danglingCreationGraceMs` (as Nomad's reconciler: a young one may be
   * another client's); returns their ids.
   */
  removeDangling(owned: ReadonlySet<string>): Promise<string[]>;
  /** Tasks using an image now (by image id). */
  imageUsers(imageId: string): number;
  /** Stops log copies and timers (containers run on); the client calls it at its shutdown. */
  shutdown(): Promise<void>;
}

/**
 * A Dockerode client for `unix:///path` or `tcp://host:port`. Its requests do not keep idle
 * connections (Node's global agent would hold each for seconds after the last request, past a
 * client's shutdown); a connection to a local Engine costs less than a millisecond.
 */
export function dockerClient(endpoint: string): Dockerode {
  const agent = new http.Agent({ keepAlive: false });
  if (endpoint.startsWith('unix://')) return new Dockerode({ socketPath: endpoint.slice('unix://'.length), agent } as Dockerode.DockerOptions);
  const u = new URL(endpoint.replace(/^tcp:/, 'http:'));
  return new Dockerode({ host: u.hostname, port: Number(u.port || 2375), protocol: 'http', agent } as Dockerode.DockerOptions);
}

const statusOf = (e: unknown): number | undefined => (e as { statusCode?: number }).statusCode;

/** The task config as its schema reads it; DriverConfigError with every problem. */
export function parseDockerConfig(task: Task): DockerTaskConfigInput {
  const r = dockerConfigSchema.safeParse(task.config ?? {});
  if (!r.success) throw new DriverConfigError(`task "${task.name}": ${issueLines(r.error).join('; ')}`);
  return r.data;
}

const stateOf = (h: TaskHandle): DockerHandleState => h.state as unknown as DockerHandleState;

/** Creates the docker driver. No Engine call is made until a fingerprint or a start. */
export function createDockerDriver(opts: DockerDriverOptions = {}): DockerDriver {
  const plugin: DockerPluginConfig = { ...defaultDockerPluginConfig(), ...opts.plugin, gc: { ...defaultDockerPluginConfig().gc, ...opts.plugin?.gc } };
  const docker = dockerClient(plugin.endpoint);
  const clock = opts.clock ?? realClock;
  const onError = opts.onError ?? (() => {});
  const pumps = new Map<string, LogPump>();
  const coresInUse = new Map<number, number>();
  const refs = new ImageRefs({
    enabled: plugin.gc.image,
    delayMs: plugin.gc.imageDelayMs,
    clock,
    remove: async (id) => {
      await docker
        .getImage(id)
        .remove({ force: false })
        .catch((e: unknown) => {
          if (statusOf(e) !== 404) throw e;
        });
    },
    onError: (e) => onError(`docker: image removal: ${errorText(e)}`),
  });

  const pickCores = (n: number | undefined): number[] | undefined => {
    if (!n) return undefined;
    const all = Array.from({ length: availableParallelism() }, (_, i) => i);
    const picked = all.sort((a, b) => (coresInUse.get(a) ?? 0) - (coresInUse.get(b) ?? 0) || a - b).slice(0, n);
    for (const c of picked) coresInUse.set(c, (coresInUse.get(c) ?? 0) + 1);
    return picked.sort((a, b) => a - b);
  };
  const releaseCores = (cores: number[] | undefined) => {
    for (const c of cores ?? []) coresInUse.set(c, Math.max(0, (coresInUse.get(c) ?? 0) - 1));
  };

  const pump = async (handle: TaskHandle, sinceSec: number) => {
    const st = stateOf(handle);
    if (pumps.has(st.containerId)) return;
    try {
      pumps.set(st.containerId, await startLogPump(docker, st.containerId, handle.config, sinceSec));
    } catch (e) {
      onError(`docker: logs of task "${handle.config.taskName}": ${errorText(e)}`);
    }
  };

  const inspect = async (id: string) => {
    try {
      return await docker.getContainer(id).inspect();
    } catch (e) {
      if (statusOf(e) === 404) return undefined;
      throw e;
    }
  };

  /** A handle saved before its start: completed from the container the start left, if any. */
  const complete = async (saved: TaskHandle): Promise<TaskHandle | undefined> => {
    if (!saved.starting) return saved;
    const found = await inspect(containerName(saved.config));
    if (!found || found.Config.Labels?.[LABEL_ALLOC_ID] !== saved.config.allocId) return undefined;
    const { starting: _s, ...rest } = saved;
    const state: DockerHandleState = { containerId: found.Id, imageId: found.Image };
    return { ...rest, state: { ...state }, ...(found.State.Pid ? { pid: found.State.Pid } : {}) };
  };

  const waitStopped = async (id: string, ms: number): Promise<boolean> => {
    const ac = new AbortController();
    const t = setTimeout(() => ac.abort(), ms);
    try {
      await docker.getContainer(id).wait({ condition: 'not-running', abortSignal: ac.signal } as never);
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(t);
    }
  };

  const driver: DockerDriver = {
    name: 'docker',
    capabilities: { fsIsolation: 'none', sendSignals: true, exec: true },
    plugin,

    validateConfig(task: Task): void {
      parseDockerConfig(task);
      if (task.killSignal !== undefined) signalName(task.killSignal);
    },

    async start(config: TaskConfig, signal: AbortSignal, emit?: DriverEventSink): Promise<TaskHandle> {
      if (signal.aborted) throw signal.reason;
      const cfg = parseDockerConfig(config.task);
      checkPluginRules(config, cfg, plugin);
      const pulled = refs.beginPull();
      let imageId: string;
      try {
        imageId = await ensureImage(docker, config, cfg, { activityMs: plugin.pullActivityTimeoutMs, emit: emit ?? (() => {}), signal });
      } finally {
        pulled();
      }
      // Taken as soon as the pull answers, as Nomad's coordinator does in its pull: a removal
      // armed by the image's last user (image_delay) must not fire before this task's container
      // exists. Given back if no container comes of it.
      refs.take(imageId, config.id);
      let container: Dockerode.Container;
      let cpuset: number[] | undefined;
      try {
        if (signal.aborted) throw signal.reason;
        // A container of this name left by an earlier run of this task (a start that died) goes first.
        const old = await inspect(containerName(config));
        if (old) await docker.getContainer(old.Id).remove({ force: true });
        cpuset = pickCores(config.task.resources?.cores);
        try {
          container = await docker.createContainer(createOptions(config, cfg, plugin, cpuset));
        } catch (e) {
          releaseCores(cpuset);
          throw new DriverStartError(`failed to create container: ${errorText(e)}`, statusOf(e) !== 400);
        }
      } catch (e) {
        refs.release(imageId, config.id);
        throw e;
      }
      const state: DockerHandleState = { containerId: container.id, imageId, ...(cpuset ? { cpuset } : {}) };
      const handle: TaskHandle = { driver: 'docker', id: config.id, config, startedAt: clock.now(), state: { ...state } };
      try {
        await container.start();
      } catch (e) {
        await driver.destroy(handle, true).catch(() => {});
        throw new DriverStartError(`failed to start container: ${errorText(e)}`, false);
      }
      // After the start: the Engine ends a follow of a container that is not running yet at
      // once. From the start (since 0), so a container that already exited is copied whole.
      await pump(handle, 0);
      const info = await inspect(container.id);
      if (info?.State.Pid) handle.pid = info.State.Pid;
      return handle;
    },

    async wait(handle: TaskHandle, signal: AbortSignal): Promise<ExitResult> {
      if (signal.aborted) throw signal.reason;
      const st = stateOf(handle);
      try {
        await docker.getContainer(st.containerId).wait({ condition: 'not-running', abortSignal: signal } as never);
      } catch (e) {
        if (signal.aborted) throw signal.reason;
        if (statusOf(e) !== 404) throw new BerthError(`docker: waiting on container ${st.containerId.slice(0, 12)}: ${errorText(e)}`);
      }
      const info = await inspect(st.containerId);
      if (!info) throw new BerthError(`docker: container ${st.containerId.slice(0, 12)} of task "${handle.config.taskName}" is gone`);
      // The last lines reach the files before the exit is reported.
      const p = pumps.get(st.containerId);
      if (p) await Promise.race([p.done, new Promise((r) => setTimeout(r, 2000).unref())]);
      const oom = !!info.State.OOMKilled;
      return {
        exitCode: info.State.ExitCode,
        signal: 0,
        ...(oom ? { oomKilled: true, err: 'OOM Killed' } : info.State.Error ? { err: info.State.Error } : {}),
      };
    },

    async stop(saved: TaskHandle, timeoutMs: number, killSignal: string): Promise<void> {
      const handle = await complete(saved);
      if (!handle) return;
      const c = docker.getContainer(stateOf(handle).containerId);
      const sig = signalName(killSignal || 'SIGTERM');
      try {
        if (sig === 'SIGTERM') {
          await c.stop({ t: Math.ceil(timeoutMs / 1000) });
          return;
        }
        await c.kill({ signal: sig });
      } catch (e) {
        const code = statusOf(e);
        if (code === 304 || code === 404 || code === 409) return; // already stopped or gone
        throw e;
      }
      if (await waitStopped(c.id, timeoutMs)) return;
      await c.kill({ signal: 'SIGKILL' }).catch((e: unknown) => {
        if (![404, 409].includes(statusOf(e) ?? 0)) throw e;
      });
    },

    async signal(handle: TaskHandle, sig: string): Promise<void> {
      try {
        await docker.getContainer(stateOf(handle).containerId).kill({ signal: signalName(sig) });
      } catch (e) {
        if (statusOf(e) === 409 || statusOf(e) === 404) throw new TaskNotRunningError();
        throw e;
      }
    },

    async destroy(saved: TaskHandle, force: boolean): Promise<void> {
      const handle = await complete(saved);
      if (!handle) return;
      const st = stateOf(handle);
      const info = await inspect(st.containerId);
      if (info?.State.Running) {
        if (!force)
          throw new BerthError(`cannot destroy task "${handle.config.taskName}": its container is still running (stop it first, or destroy with force)`);
        await driver.stop(handle, 0, 'SIGKILL');
      }
      const p = pumps.get(st.containerId);
      pumps.delete(st.containerId);
      p?.stop();
      await p?.done;
      if (info && plugin.gc.container) {
        await docker
          .getContainer(st.containerId)
          .remove({ force: true, v: true })
          .catch((e: unknown) => {
            if (statusOf(e) !== 404 && statusOf(e) !== 409) throw e;
          });
      }
      releaseCores(st.cpuset);
      refs.release(st.imageId, handle.id);
    },

    async recover(saved: TaskHandle): Promise<TaskHandle> {
      if (saved.driver !== 'docker') throw new BerthError(`cannot recover a "${saved.driver}" task with the docker driver`);
      const handle = await complete(saved);
      if (!handle) throw new TaskNotStartedError(`task "${saved.config.taskName}": no container ${containerName(saved.config)} was made`);
      const st = stateOf(handle);
      if (typeof st?.containerId !== 'string') throw new BerthError(`cannot recover task "${handle.config.taskName}": its handle has no container id`);
      const info = await inspect(st.containerId);
      if (!info) throw new BerthError(`cannot recover task "${handle.config.taskName}": container ${st.containerId.slice(0, 12)} is gone`);
      refs.take(st.imageId, handle.id);
      if (st.cpuset) for (const c of st.cpuset) coresInUse.set(c, (coresInUse.get(c) ?? 0) + 1);
      // Running: copy its output again from now (what it wrote while no client ran is in the
      // Engine's own log, not copied twice). Exited meanwhile: wait() reports its exit.
      if (info.State.Running) await pump(handle, Math.floor(Date.now() / 1000));
      return handle;
    },

    async exec(handle: TaskHandle, command: string[], o: ExecOptions = {}): Promise<ExecResult> {
      if (!command.length || !command[0]) throw new ExecError('exec: no command given');
      if (o.tty) throw new ExecError('exec: a tty is not supported by berth; run without one (nomad alloc exec -t=false)');
      const c = docker.getContainer(stateOf(handle).containerId);
      const info = await inspect(c.id);
      if (!info?.State.Running) throw new TaskNotRunningError();
      const ex = await c.exec({ Cmd: command, AttachStdout: true, AttachStderr: true, AttachStdin: o.stdin !== undefined });
      const stream = (await ex.start({ hijack: true, stdin: o.stdin !== undefined })) as NodeJS.ReadWriteStream;
      const max = o.maxOutputBytes ?? 1024 * 1024;
      const bufs = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
      const sizes = { stdout: 0, stderr: 0 };
      const sink = (which: 'stdout' | 'stderr') =>
        new Writable({
          write(chunk: Buffer, _e, cb) {
            o.onOutput?.(which, chunk);
            if (sizes[which] < max) {
              bufs[which].push(chunk.subarray(0, max - sizes[which]));
              sizes[which] += chunk.length;
            }
            cb();
          },
        });
      docker.modem.demuxStream(stream, sink('stdout'), sink('stderr'));
      const ended = new Promise<void>((resolve, reject) => {
        stream.on('end', resolve);
        stream.on('close', resolve);
        stream.on('error', reject);
        const abort = () => {
          (stream as unknown as { destroy(): void }).destroy();
          reject(o.signal?.reason ?? new ExecError('exec aborted'));
        };
        o.signal?.addEventListener('abort', abort, { once: true });
        if (o.timeoutMs) setTimeout(() => reject(new ExecError(`exec: timed out after ${o.timeoutMs} ms`)), o.timeoutMs).unref();
      });
      if (o.stdin !== undefined) {
        const input = typeof o.stdin === 'string' || Buffer.isBuffer(o.stdin) ? [Buffer.from(o.stdin)] : o.stdin;
        for await (const chunk of input) stream.write(chunk);
        // Half-close: the command sees the end of its input.
        (stream as unknown as { end(): void }).end();
      }
      await ended;
      const r = await ex.inspect();
      return { stdout: Buffer.concat(bufs.stdout), stderr: Buffer.concat(bufs.stderr), exitCode: r.ExitCode ?? -1, signal: 0 };
    },

    async stats(handle: TaskHandle): Promise<TaskResourceUsage> {
      const s = (await docker.getContainer(stateOf(handle).containerId).stats({ stream: false })) as Dockerode.ContainerStats;
      const usage = emptyUsage();
      const m = s.memory_stats ?? {};
      const ms = (m.stats ?? {}) as Record<string, number>;
      usage.memoryStats = {
        rss: ms.rss ?? ms.anon ?? 0,
        cache: ms.cache ?? ms.file ?? 0,
        swap: ms.swap ?? 0,
        usage: m.usage ?? 0,
        maxUsage: m.max_usage ?? 0,
        measured: ['RSS', 'Cache', 'Usage', 'Max Usage'],
      };
      const cpu = s.cpu_stats;
      const pre = s.precpu_stats;
      const cpuDelta = (cpu?.cpu_usage?.total_usage ?? 0) - (pre?.cpu_usage?.total_usage ?? 0);
      const sysDelta = (cpu?.system_cpu_usage ?? 0) - (pre?.system_cpu_usage ?? 0);
      const cores = cpu?.online_cpus ?? availableParallelism();
      const percent = sysDelta > 0 ? (cpuDelta / sysDelta) * cores * 100 : 0;
      usage.cpuStats = {
        ...usage.cpuStats,
        percent,
        totalTicks: percent / 100,
        throttledPeriods: cpu?.throttling_data?.throttled_periods ?? 0,
        throttledTime: cpu?.throttling_data?.throttled_time ?? 0,
        measured: ['Percent', 'Throttled Periods', 'Throttled Time'],
      };
      return { resourceUsage: usage, timestamp: clock.now() };
    },

    async fingerprint(): Promise<DockerFingerprint> {
      try {
        const v = await docker.version();
        return {
          detected: true,
          healthy: true,
          healthDescription: 'Healthy',
          attributes: {
            'driver.docker': '1',
            'driver.docker.version': v.Version,
            'driver.docker.privileged.enabled': String(plugin.allowPrivileged),
            'driver.docker.volumes.enabled': String(plugin.volumesEnabled),
            'driver.docker.os_type': v.Os,
          },
        };
      } catch {
        return { detected: false, healthy: false, healthDescription: 'Docker is not available', attributes: {} };
      }
    },

    async removeDangling(owned: ReadonlySet<string>): Promise<string[]> {
      // Nomad's reconciler looks at running containers only; a stopped one is the container GC's.
      const list = await docker.listContainers({ all: false, filters: { label: [LABEL_ALLOC_ID] } });
      const cutoffSec = (clock.now() - plugin.gc.danglingCreationGraceMs) / 1000;
      const removed: string[] = [];
      for (const c of list) {
        const alloc = c.Labels[LABEL_ALLOC_ID];
        if (!alloc || owned.has(alloc) || c.Created > cutoffSec) continue;
        await docker
          .getContainer(c.Id)
          .remove({ force: true, v: true })
          .then(() => removed.push(c.Id))
          .catch((e: unknown) => onError(`docker: removing dangling container ${c.Id.slice(0, 12)}: ${errorText(e)}`));
      }
      return removed;
    },

    imageUsers: (id) => refs.users(id),

    async shutdown(): Promise<void> {
      refs.close();
      const all = [...pumps.values()];
      pumps.clear();
      for (const p of all) p.stop();
      await Promise.all(all.map((p) => p.done));
    },
  };
  return driver;
}
