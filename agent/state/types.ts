/**
 * What the agent's server half holds: jobs with their versions, evaluations, deployments, the
 * node, and allocations as the servers see them. Plain data, camelCase except for the job as
 * submitted, which stays in Nomad's API shape (what `/v1/job/:id` returns).
 * @module
 */
import type { Allocation, DriverFingerprint, VariableMeta } from '../../index.ts';
import type { ApiJob as NomadApiJob } from '../jobspec/index.ts';
import type { AllocMetric, Evaluation as SchedulerEvaluation } from '../scheduler/index.ts';

/**
 * A job as Nomad's API shapes it (PascalCase; the one type, the jobspec's), with its ID set: kept
 * as submitted, with the server's fields set.
 */
export type ApiJob = NomadApiJob & { ID: string };

/** One version of a job, as registered. */
export interface JobRecord {
  id: string;
  namespace: string;
  version: number;
  /** The Nomad API job (with `Version`, `Stop`, indexes and `SubmitTime` filled). */
  apiJob: ApiJob;
  createIndex: number;
  modifyIndex: number;
  jobModifyIndex: number;
  submitTime: number;
  /** Last change to the job itself (registered, stopped), ms since the epoch; `submitTime` when unset. */
  modifyTime?: number;
  stop: boolean;
}

/** Nomad's evaluation statuses. */
export type EvalStatus = SchedulerEvaluation['status'];

/**
 * An evaluation: why the scheduler ran, and what came of it (the scheduler's evaluation, with the
 * server's indexes and what the plan did, for the CLI).
 */
export type Evaluation = SchedulerEvaluation & {
  /** The job's `JobModifyIndex` when the evaluation was made. */
  jobModifyIndex?: number;
  /** The state index the scheduler read when it processed the evaluation (Nomad's `SnapshotIndex`). */
  snapshotIndex?: number;
  deploymentId?: string;
  /** Placements, stops and preemptions this evaluation made (berth's addition, for the CLI). */
  plan?: { placed: string[]; stopped: string[]; preempted: Array<{ allocId: string; by: string }> };
  createIndex: number;
  modifyIndex: number;
};

/** A deployment of one job version. */
export interface Deployment {
  id: string;
  namespace: string;
  jobId: string;
  jobVersion: number;
  jobModifyIndex: number;
  jobCreateIndex: number;
  status: 'running' | 'successful' | 'failed' | 'cancelled' | 'paused';
  statusDescription: string;
  taskGroups: Record<
    string,
    {
      desiredTotal: number;
      placedAllocs: number;
      healthyAllocs: number;
      unhealthyAllocs: number;
      maxParallel: number;
      minHealthyTimeMs: number;
      healthyDeadlineMs: number;
      progressDeadlineMs: number;
      /** `update.canary`: canaries to place before promotion (0 or unset: none). */
      desiredCanaries?: number;
      /** Ids of the canaries placed so far. */
      placedCanaries?: string[];
      /** The group's canaries were promoted (by the operator or `auto_promote`). */
      promoted?: boolean;
      /** `update.auto_revert`: a failed deployment re-registers the latest stable job version. */
      autoRevert?: boolean;
      /** `update.auto_promote`: promote once every canary is healthy. */
      autoPromote?: boolean;
      /** Nomad's `RequireProgressBy` (ms since the epoch): the group fails unless an alloc turns healthy by then. */
      requireProgressBy?: number;
    }
  >;
  createIndex: number;
  modifyIndex: number;
  createTime: number;
  modifyTime: number;
}

/**
 * An allocation as the server half sees it: the servers' fields (round-3 ones included: eval,
 * job version, desired description, deployment status, allocated resources) and the client's
 * last report (status, task states).
 */
export interface ServerAlloc {
  alloc: Allocation;
  /** How the scheduler placed it (Nomad's `Allocation.Metrics`). */
  metrics?: AllocMetric;
  /** The alloc that preempted this one. */
  preemptedBy?: string;
  /** The alloc that replaced this one. */
  nextAllocation?: string;
  createIndex: number;
  modifyIndex: number;
}

/** This agent's node. */
export interface NodeRecord {
  id: string;
  secretId: string;
  name: string;
  datacenter: string;
  region: string;
  httpAddr: string;
  tlsEnabled: boolean;
  status: 'ready' | 'down' | 'initializing';
  cpuMHz: number;
  /** CPU cores (ids 0..cores-1). */
  cores: number;
  memoryMB: number;
  diskMB: number;
  reserved: { cpu: number; memoryMB: number; diskMB: number };
  /** Host ports kept from every alloc, in Nomad's syntax (`22,80,8000-8100`; `client.reserved.reserved_ports`). */
  reservedPorts?: string;
  /** The dynamic port range (`client.min_dynamic_port`, `client.max_dynamic_port`; Nomad's 20000..32000). */
  minDynamicPort?: number;
  maxDynamicPort?: number;
  /** When the node's status last changed (it registered, ready), ms since the epoch. */
  statusUpdatedAt?: number;
  /** When the drivers were last fingerprinted, ms since the epoch. */
  driversUpdatedAt?: number;
  /** Drivers detected and healthy: what the scheduler places on. */
  drivers: string[];
  /** Every driver's last fingerprint (undetected ones too), as the node API reports `Drivers`. */
  driverHealth?: Record<string, DriverFingerprint>;
  /** Fingerprinted attributes under Nomad's names (`kernel.name`, `driver.exec`, ...). */
  attributes?: Record<string, string>;
  /** The client's `meta` block. */
  meta?: Record<string, string>;
  nodeClass?: string;
  nodePool?: string;
  createIndex: number;
  modifyIndex: number;
}

/** The tables a blocking query can wait on. */
export type Table = 'jobs' | 'evals' | 'allocs' | 'deployments' | 'nodes' | 'scheduler' | 'services' | 'vars';

/**
 * A variable's items as stored: AES-256-GCM over their JSON, sealed by `agent/variables/crypto.ts`
 * (base64 fields). The state never holds them in clear.
 */
export interface SealedItems {
  /** The root key they are sealed with (its file is `<data_dir>/server/keystore/<keyId>.nks.json`). */
  keyId: string;
  /** The 12-byte nonce of this write. */
  nonce: string;
  /** GCM's 16-byte authentication tag. */
  tag: string;
  /** The ciphertext. */
  data: string;
}

/**
 * A Nomad variable as the state keeps it (Nomad's `VariableEncrypted`): the metadata in clear,
 * the items sealed. Times are nanoseconds since the epoch, as Nomad's API reports them.
 */
export interface VarRecord extends VariableMeta {
  sealed: SealedItems;
}

/** The key of a variable in {@link VarRecord}'s map and the `objects` table: `<namespace>/<path>`. */
export const varKey = (namespace: string, path: string): string => `${namespace}/${path}`;
