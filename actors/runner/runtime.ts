/**
 * What every effect actor of a client reaches: the client's services and its registry of
 * runners. Machines only carry alloc ids; effect actors look the handles up here.
 * @module
 */
import type { AllocBroadcaster } from '../../bus/broadcaster.ts';
import { BerthError } from '../../model/errors.ts';
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import type { AllocDeploymentStatus, Allocation, TaskEvent, TaskGroup } from '../../model/types.ts';
import type { TaskMachineEvent } from '../../machines/task/index.ts';
import type { ExecOptions } from '../drivers/driver.ts';
import type { ServiceCatalog } from '../services/catalog.ts';
import type { AllocDirFactory, AllocDirHandle } from '../allocdir/handle.ts';
import type { InFlight } from '../allocdir/in-flight.ts';
import type { Driver } from '../drivers/driver.ts';
import type { StateStore } from '../state/state-store.ts';
import type { PrevAllocSource, RetryPolicy, ServerRPC } from '../watchers/index.ts';
import type { RunnerHook } from './hooks.ts';
import type { TlsFiles } from '../migrate/env.ts';
import type { TaskTemplateManager } from './template-manager.ts';
import type { TemplateData } from './template-data.ts';

export type { TlsFiles };

/** One runner's handles, keyed by alloc id in {@link Runtime.registry}. */
export interface RunnerInternals {
  allocId: string;
  allocDir: AllocDirHandle;
  broadcaster: AllocBroadcaster;
  hooks: readonly RunnerHook[];
  group: TaskGroup;
  /** The server view the alloc chart last applied (its context's alloc). */
  serverAlloc(): Allocation;
  /** The client view (server fields plus client status and task states). */
  clientAlloc(): Allocation;
  /** Aborts when destroy begins. */
  destroySignal: AbortSignal;
  /** Local runner of `alloc.previousAllocation`, captured when the alloc was added. */
  previousRunner?: PrevAllocSource;
  /** Preempted alloc id -> local runner or null, captured when the alloc was added. */
  preemptedRunners?: Record<string, PrevAllocSource | null>;
  /**
   * In-flight work in or out of this alloc's dir (its build, prerun/postrun hooks, local moves,
   * snapshots): the destroy hook waits for all of it before removing the dir.
   */
  readonly copiesOut: InFlight;
  /** Restored from the state store: waiting and migration already happened in its first life. */
  restored?: boolean;
  /** Task events to add at each task's first start (e.g. what a migration removed), by task name. */
  readonly setupNotes: Map<string, TaskEvent[]>;
  /** Each task's template manager, made at its first prestart; lives as long as the runner. */
  readonly templates: Map<string, TaskTemplateManager>;
  /** Runs a command inside a running task (script checks). */
  exec(task: string, argv: string[], opts: ExecOptions): Promise<{ exitCode: number; stdout: Buffer; stderr: Buffer }>;
  /** Sends an event to a task's chart (a check_restart's `restart`). */
  toTask(taskName: string, event: TaskMachineEvent): void;
  /**
   * Restarts the running tasks as Nomad's alloc runner `Restart` does (the group's delay and the
   * preTaskRestart hooks first), each a failure for its restart policy: a group service's
   * check_restart. Nothing when the alloc is not running.
   */
  restartRunningFailed(reason: string): void;
  /** Records the alloc's health for its deployment (once) and reports the new client view. */
  setDeploymentStatus(status: AllocDeploymentStatus): void;
}

/** The handles of `allocId`'s runner; a runner gone from the registry is a BerthError. */
export function runnerOf(rt: Pick<Runtime, 'registry'>, allocId: string): RunnerInternals {
  const r = rt.registry.get(allocId);
  if (!r) throw new BerthError(`no runner for allocation ${allocId}`);
  return r;
}

/** A client's services, shared by every effect actor it provides. */
export interface Runtime {
  bus: Bus;
  clock: Clock;
  random: () => number;
  drivers: Readonly<Record<string, Driver>>;
  chrootEnv: Readonly<Record<string, string>>;
  dataDir: string;
  clientAllocDir: string;
  nodeId: string;
  /** Node name, datacenter and region for the task environment (each optional). */
  nodeName?: string;
  datacenter?: string;
  region?: string;
  /** The node's `attr.*`, `meta.*`, `node.class` and `node.pool`, read at each use (the host may re-fingerprint). */
  nodeVariables?: () => Readonly<Record<string, string>>;
  /** The cgroup tasks live under (`NOMAD_PARENT_CGROUP`), when cgroups are in use. */
  parentCgroup?: string;
  maxKillTimeoutMs: number;
  migrateTimeoutMs: number;
  store: StateStore;
  rpc?: ServerRPC;
  /** Retry timing for remote watchers and node lookups (defaults: 30 s + [0, 30 s)). */
  retry?: RetryPolicy;
  /** Token sent as X-Nomad-Token when fetching a remote snapshot. */
  migrateToken?: string;
  /** TLS material for migrations and the snapshot server (`ClientOptions.tls`). */
  tls?: TlsFiles;
  registry: Map<string, RunnerInternals>;
  /** Makes each alloc's directory handle (default: a real {@link AllocDir} under `clientAllocDir`). */
  allocDirs: AllocDirFactory;
  /** Host filesystem steps outside alloc dirs (each task's driver state dir). */
  fs: HostFs;
  /** The client's Nomad-native service catalog. */
  services: ServiceCatalog;
  /** Address of services with no port label (the node's address). Default 127.0.0.1. */
  serviceAddress: string;
  /** What templates read and may do: data sources, the client's `template` config. */
  templates: TemplateRuntime;
}

/** The client-wide part of the template hook. */
export interface TemplateRuntime {
  data: TemplateData;
  /** The least time between two "Missing: ..." events of one task. */
  eventRateMs: number;
  denylist: readonly string[];
  noSandbox: boolean;
}

/** The few host filesystem steps the runtime takes outside alloc dirs; injectable for the simulator. */
export interface HostFs {
  /** `mkdir -p` */
  mkdirp(path: string): Promise<void>;
  /** `rm -rf`; never rejects for a missing path. */
  rmrf(path: string): Promise<void>;
  /** `rmdir`: removes an empty directory; rejects when it is not empty or missing. */
  rmdir(path: string): Promise<void>;
}
