/**
 * What a migration takes from its client and its runners: a few services and handles, not the
 * runtime bag. A client's runtime and its runners' internals fit these shapes as they are, so
 * the migrate folder never imports the runner (which imports it).
 * @module
 */
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import type { Allocation, TaskEvent, TaskGroup } from '../../model/types.ts';
import type { AllocDirHandle } from '../allocdir/handle.ts';
import type { InFlight } from '../allocdir/in-flight.ts';
import type { PrevAllocSource, RetryPolicy, ServerRPC } from '../watchers/types.ts';

/** Paths of the PEM files berth uses for HTTPS (Nomad's client `tls` block). */
export interface TlsFiles {
  /** CA bundle that peers' certificates must chain to. */
  caFile: string;
  /** This node's certificate (presented as a client certificate, and served). */
  certFile: string;
  /** Its private key. */
  keyFile: string;
  /** Check the peer's certificate names `client.<region>.nomad` (Nomad's `verify_server_hostname`). Default true. */
  verifyServerHostname?: boolean;
}

/** The client-wide services a migration (or the snapshot server) uses. */
export interface MigrateEnv {
  bus: Bus;
  clock: Clock;
  random: () => number;
  /** Where alloc dirs go (a remote migration unpacks beside them first). */
  clientAllocDir: string;
  migrateTimeoutMs: number;
  rpc?: ServerRPC;
  retry?: RetryPolicy;
  /** Sent as X-Nomad-Token when fetching a remote snapshot. */
  migrateToken?: string;
  tls?: TlsFiles;
  /** Every runner's in-flight work, by alloc id (a local move holds the previous alloc's dir). */
  registry: ReadonlyMap<string, MigrationTarget>;
}

/** What a migration needs of one runner: its dir, group and alloc, and its in-flight set. */
export interface MigrationTarget {
  allocId: string;
  allocDir: AllocDirHandle;
  group: TaskGroup;
  /** The server view the runner last applied. */
  serverAlloc(): Allocation;
  readonly copiesOut: InFlight;
  /** Aborts when its destroy begins. */
  destroySignal: AbortSignal;
  /** Task events to add at each task's first start (what a migration removed). */
  readonly setupNotes: Map<string, TaskEvent[]>;
  /** Restored from the state store: its migration happened in its first life. */
  restored?: boolean;
  /** Local runner of its previous alloc, captured when it was added. */
  previousRunner?: PrevAllocSource;
}

/** What a remote migration reads of its client: finding the node, fetching, reporting. */
export type RemoteMigrateEnv = Pick<MigrateEnv, 'bus' | 'clock' | 'random' | 'clientAllocDir' | 'rpc' | 'retry' | 'migrateToken' | 'tls'>;

/** What a remote migration reads of its runner: the dir it fills and what it tells the tasks. */
export type RemoteMigrateTarget = Pick<MigrationTarget, 'allocId' | 'allocDir' | 'group' | 'serverAlloc' | 'setupNotes'>;
