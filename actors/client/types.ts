/**
 * The client's public types: `createClient`'s options and the client (an allocation's runner is
 * `actors/runner/api.ts`; see docs/embedding.md).
 * @module
 */
import type { Observable } from 'rxjs';
import type { AnyActorRef } from 'xstate';
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import type { Allocation, CheckResult, ServiceRegistration } from '../../model/types.ts';
import type { VariableSource } from '../../model/variables.ts';
import type { CgroupOptions } from '../cgroups/detect.ts';
import type { Driver, DriverFingerprint } from '../drivers/driver.ts';
import type { DockerDriverOptions } from '../drivers/docker/docker-driver.ts';
import type { RetryPolicy, ServerRPC } from '../watchers/index.ts';
import type { RunnerHook } from '../runner/hooks.ts';
import type { HostFs } from '../runner/runtime.ts';
import type { TlsFiles } from '../migrate/env.ts';
import type { AllocDirFactory } from '../allocdir/handle.ts';
import type { StateStore, StateStoreOptions } from '../state/state-store.ts';
import type { ServeSnapshotsOptions } from '../migrate/serve.ts';

export type { TlsFiles };
import type { AllocRunner, InspectionObserver } from '../runner/api.ts';

// The runner's own API lives beside its implementation; re-exported for hosts reading this file.
export type { AllocRunner, InspectionObserver, LogStream } from '../runner/api.ts';
import type { GcClientOptions } from '../gc/options.ts';
import type { ArtifactLookup } from '../artifacts/lookup.ts';

/** Options for {@link createClient}. */
/** Nomad's client `template` block: what every task's templates may do on this client. */
export interface TemplateClientConfig {
  /** Functions no template may call (Nomad's default: `plugin`, `writeToFile`). */
  functionDenylist?: string[];
  /** Let `file` (and `source`) read outside the task dir (default false). */
  disableFileSandbox?: boolean;
  /** How long one blocking query for template data waits before it asks again (default 5 min). */
  blockQueryWaitMs?: number;
  /** The least time between two "Missing: ..." events of one task (default 3 s, Nomad's). */
  maxTemplateEventRateMs?: number;
}

export interface ClientOptions extends GcClientOptions {
  /** State (`<dataDir>/client/state.db`) and, by default, `<dataDir>/alloc`. */
  dataDir: string;
  /** Where alloc dirs go (default `<dataDir>/alloc`). */
  allocDir?: string;
  /** This node's id (compared with a previous allocation's node to pick a local or remote migration). */
  nodeId?: string;
  /** The node's name, for `${node.unique.name}` (Nomad sets no NOMAD_NODE_NAME variable). */
  nodeName?: string;
  /** The node's datacenter (`NOMAD_DC`); default: the job's datacenter when it names exactly one. */
  datacenter?: string;
  /** The client's region (`NOMAD_REGION`); default: the job's region, else `global`. */
  region?: string;
  /**
   * The node's other interpolation variables, called at each use: `attr.*`, `meta.*`,
   * `node.class`, `node.pool` (build them with `nodeVariablesOf`), so `${attr.cpu.arch}` resolves
   * in a task's env, meta, artifact source and destination as on a Nomad client. Default none.
   */
  nodeVariables?: () => Readonly<Record<string, string>>;
  /** How to ask the servers: remote watchers and remote migrations need it. */
  rpc?: ServerRPC;
  /** Merged over the defaults: 'mock_driver', 'raw_exec', 'exec', 'docker'. */
  drivers?: Record<string, Driver>;
  /**
   * The docker driver's client side (Nomad's `plugin "docker" { config }`); default Nomad's. Given,
   * `restore()` also removes dangling containers (berth's labels, no alloc of this client).
   */
  docker?: Pick<DockerDriverOptions, 'plugin'>;
  /** Default: Nomad's default chroot_env. A non-empty map replaces it entirely. */
  chrootEnv?: Record<string, string>;
  /** Extra alloc-runner hooks, run after the built-in ones. */
  hooks?: RunnerHook[];
  /** Passed to xstate: every actor becomes inspectable. Off by default (and free when off). */
  inspect?: InspectionObserver;
  /** Caps every task's killTimeoutMs (default 30000). */
  maxKillTimeoutMs?: number;
  /**
   * A stanza berth does not run (template, vault, volumes, constraints, ...): `'refuse'` (default:
   * `addAlloc` throws UnsupportedStanzaError) or `'warn'` (the alloc runs without it and each one
   * is published as `alloc.unsupported`). A driver berth lacks is refused either way.
   */
  unsupported?: 'refuse' | 'warn';
  /**
   * Where templates read Nomad Variables (`nomadVar`, ...). Without one, a template that reads a
   * variable fails its task ("Template failed: ... no variable source").
   */
  variables?: VariableSource;
  /** The client's `template` block (Nomad's client config); see {@link TemplateClientConfig}. */
  templates?: TemplateClientConfig;
  /** Bound on waiting-prev (default: none). */
  prevAllocWaitTimeoutMs?: number;
  /** Bound on a data migration (default 600000). */
  migrateTimeoutMs?: number;
  /** Clock for every delay berth schedules (default: real time). Tests inject one. */
  clock?: Clock;
  /** Address registered for services without a port label (the node's address). Default 127.0.0.1. */
  serviceAddress?: string;
  /**
   * Bounds on artifact downloads (defaults: 30 minutes; the group's ephemeral disk in bytes) and
   * how their hosts are looked up (default: the system's DNS servers by c-ares, off libuv's threadpool).
   */
  artifacts?: { timeoutMs?: number; maxBytes?: number; lookup?: ArtifactLookup };
  /** Random source in [0,1) for jitter and stagger (default Math.random). */
  random?: () => number;
  /** Remote watcher retry timing (default 30000 + uniform [0, 30000)). */
  retry?: RetryPolicy;
  /**
   * Path of a JSON-lines file to record every inspection event and bus message to (secrets
   * left out), for `berth view FILE`. Written until `shutdown()`. Off by default.
   */
  record?: string;
  /** Token sent as X-Nomad-Token when fetching a previous alloc's snapshot from another node. */
  migrateToken?: string;
  /**
   * HTTPS for migrations (Nomad's client `tls` block): a node whose `tlsEnabled` is set is asked
   * over HTTPS, presenting `certFile`/`keyFile`, trusting only `caFile`, and (unless
   * `verifyServerHostname` is false) checking the peer's certificate names
   * `client.<region>.nomad`. `serveSnapshots` then serves HTTPS and requires client certificates
   * signed by `caFile`.
   */
  tls?: TlsFiles;
  /**
   * Task cgroups (limits, OOM reports, clean kills, stats) for raw_exec and exec. Default: detected
   * at start (`mode: 'auto'`); `{ mode: 'off' }` turns them off.
   */
  cgroups?: CgroupOptions;
  /** Publish every running task's usage as `task.stats` this often (ms). Default 0: off. */
  statsIntervalMs?: number;
  /**
   * A state store that cannot be opened or read is moved aside (`state.db.damaged-<time>`) and
   * a fresh one made, instead of a `StateStoreError`; `restore()` then keeps what the live
   * executors prove and stops (and reports) the tasks no one owns any more. Default false.
   */
  repairStateStore?: boolean;
  /** @internal Simulator seams; see {@link ClientSeams}. Not part of the public API. */
  seams?: ClientSeams;
}

/**
 * @internal What the deterministic simulator (`sim/`) replaces below berth's own code: the alloc
 * dirs, the host filesystem steps, and the state store (opened on a shared in-memory database,
 * its write coalescing on the simulated clock). Not part of the public API.
 */
export interface ClientSeams {
  allocDirs?: AllocDirFactory;
  fs?: HostFs;
  /** Opens the client's state store; gets `<dataDir>/client/state.db` and the client's options. */
  openStore?: (path: string, opts?: StateStoreOptions) => StateStore;
}

/** The client: a registry of allocation runners on one node. */
export interface Client {
  /** Throws InvalidAllocationError synchronously for an invalid alloc or an unknown driver; nothing on disk. */
  addAlloc(alloc: Allocation): AllocRunner;
  /** A terminal desired status stops it; no update hooks run for a stop. */
  updateAlloc(alloc: Allocation): void;
  /** Destroys one allocation (kills its tasks, runs destroy hooks, removes its dir); AllocNotFoundError if unknown. */
  destroyAlloc(allocId: string): Promise<void>;
  /** A destroyed runner is gone. */
  runner(allocId: string): AllocRunner | undefined;
  /** Every runner the client has, in the order they were added. */
  runners(): AllocRunner[];
  readonly bus: Bus;
  /** Client-side alloc updates meant for the servers. */
  readonly updates$: Observable<Allocation>;
  /** The client's Nomad-native service catalog: every registered group and task service. */
  services(): ServiceRegistration[];
  /**
   * Each driver's fingerprint now, by name: what a node reports to its servers (a driver without
   * a fingerprint of its own is detected and healthy; docker asks its Engine).
   */
  fingerprintDrivers(): Promise<Record<string, DriverFingerprint>>;
  /**
   * The latest result of each Nomad-provider check of an alloc's services (empty for an alloc
   * without checks, or one this client does not have), by service then check name.
   */
  checks(allocId: string): CheckResult[];
  /**
   * Serves `GET /v1/client/allocation/<id>/snapshot` for this client's allocs, so a replacement
   * on another client (`migrate: true`) can pull their data. Default 127.0.0.1 on a free port;
   * with `token`, requests must carry it as `X-Nomad-Token`. A snapshot in flight holds off its
   * alloc's destroy. `shutdown()` closes every server started here. With `tls` (default:
   * `ClientOptions.tls`) it serves HTTPS and requires client certificates signed by its CA.
   */
  serveSnapshots(opts?: ServeSnapshotsOptions): Promise<{
    /** The server's base URL. */
    url: string;
    /** Stops serving (snapshots in flight are ended). */
    close(): Promise<void>;
  }>;
  /**
   * Serves berth's own inspector page: the actor tree, the alloc and task charts with the active
   * state, a timeline per alloc, who waits for whom, and a task's log tail, live. Every asset
   * ships with berth (works with no internet). Default 127.0.0.1 on a free port; with `token`,
   * every request needs it (open `url + '?token=' + token`). `shutdown()` closes it.
   */
  serveViewer(opts?: {
    host?: string;
    port?: number;
    token?: string;
    /** With `token`: a one-time code the host issued, taken once instead of the token (`?code=`). */
    redeemCode?: (code: string) => boolean;
  }): Promise<{
    /** The page's URL. */
    url: string;
    /** How many pages are connected now. */
    pages(): number;
    /** Resolves once a page is connected. */
    pageConnected(): Promise<void>;
    /** Stops serving and disconnects every page. */
    close(): Promise<void>;
  }>;
  /**
   * Shows a host's own actor in this client's viewer and recording beside the client's (the
   * agent's evaluations and deployment watchers). Call it before starting the actor; it is shown
   * until it stops (a final state, an error, `stop()`) or the returned function is called.
   * Costs nothing while no viewer or recording is on.
   */
  attachActor(actor: AnyActorRef): () => void;
  /** Stops every actor and leaves running tasks alone. */
  shutdown(): Promise<void>;
  /**
   * Brings back the allocations an earlier client on the same `dataDir` left (after a shutdown or
   * a crash of the host): each gets a runner again, and running tasks are reattached through
   * their driver's `recover` rather than started anew. A task that exited meanwhile reports its
   * exit; one that cannot be reattached gets a "Failed Restoring Task" event and its restart
   * policy decides.
   */
  restore(): Promise<AllocRunner[]>;
  /**
   * Collects every terminal allocation now, as `nomad system gc` does for a node: destroys them
   * (at most `gcParallelDestroys` at once), drops their state, publishes `gc.collected` with
   * reason `forced`; resolves with their ids. Allocs still waited on by a replacement, or whose
   * data is being copied, are left for later.
   */
  gc(): Promise<string[]>;
  /**
   * Collects one terminal allocation now (Nomad's `/v1/client/allocation/:id/gc`).
   * @throws AllocNotFoundError when the client has no such allocation
   * @throws AllocNotEligibleForGcError when it is not terminal, or is still needed
   */
  gcAlloc(allocId: string): Promise<void>;
}
