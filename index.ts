/**
 * berth: an embeddable allocation runtime. Nomad's client lifecycle as xstate actors on an RxJS
 * bus. This file only re-exports the public API, which `docs/` describes and `npm run docs`
 * renders from these exports' TSDoc.
 * @module
 */
// 1. Model
export type {
  AllocatedPort,
  AllocatedResources,
  AllocatedTaskResources,
  AllocDeploymentStatus,
  Allocation,
  Artifact,
  Affinity,
  CheckRestart,
  ClientStatus,
  Constraint,
  DesiredStatus,
  DesiredTransition,
  Disconnect,
  Job,
  LifecycleHook,
  MigrateStrategy,
  NetworkResource,
  Port,
  RescheduleEvent,
  ReschedulePolicy,
  RescheduleTracker,
  Resources,
  RestartPolicy,
  Service,
  Spread,
  ServiceCheck,
  ServiceRegistration,
  CheckResult,
  Task,
  TaskEvent,
  TaskGroup,
  TaskState,
  UpdateStrategy,
} from './model/types.ts';
export { isTerminated, isServerTerminal, isTerminal, isClientTerminalStatus, shouldMigrate } from './model/status.ts';
export {
  parseAllocation,
  checkAllocation,
  parseJob,
  checkJob,
  jobToNomad,
  isUUID,
  DEFAULT_NODE_ID,
  type ParseAllocationOptions,
  type CheckedAllocation,
  type CheckedJob,
} from './model/parse.ts';
export { didYouMean } from './model/schema/issues.ts';
export {
  DEFAULT_JOB_PRIORITY,
  DEFAULT_UPDATE,
  DEFAULT_MIGRATE,
  DEFAULT_EPHEMERAL_DISK_MB,
  DEFAULT_KILL_TIMEOUT_MS,
  DEFAULT_LOGS,
  defaultReschedulePolicy,
} from './model/job-defaults.ts';
export { parseGoDuration, toMs, formatGoDuration } from './model/duration.ts';
export { MEMORY_NO_LIMIT } from './model/memory.ts';
export { realClock, sleep, type Clock } from './model/clock.ts';
export * from './model/errors.ts';
export { errorText } from './model/error-text.ts';
export {
  workloadMayRead,
  type VariableData,
  type VariableMeta,
  type VariableReadOptions,
  type VariableSource,
  type WorkloadIdentity,
} from './model/variables.ts';
export { addUsage, emptyUsage, type AllocResourceUsage, type CpuStats, type MemoryStats, type ResourceUsage, type TaskResourceUsage } from './model/usage.ts';

// 2. Bus and broadcaster
export { AllocBroadcaster, AllocListener } from './bus/broadcaster.ts';
export { createBus, type Bus } from './bus/bus.ts';
export type { BusMessage, BusMessageMap, BusMessageType } from './bus/messages.ts';

// 3. Allocation and task directories
export {
  AllocDir,
  TaskDir,
  restoreSnapshot,
  defaultChrootEnv,
  SnapshotStreamError,
  MountError,
  type RestoreSnapshotOptions,
  type RestoreSnapshotResult,
} from './actors/allocdir/index.ts';
export {
  createAllocFS,
  AllocFSError,
  AllocPathEscapeError,
  SecretFileReadError,
  PrivateFileReadError,
  AllocFileNotFoundError,
  AllocFSArgumentError,
  type AllocFS,
  type AllocFileInfo,
  type AllocFSStreamOptions,
} from './actors/allocfs/index.ts';
export { createSnapshotServer } from './actors/migrate/snapshot-server.ts';
export type { AllocDirOptions } from './actors/allocdir/alloc-dir.ts';
export type { TaskDirBuildOptions } from './actors/allocdir/task-dir.ts';
export { TaskDirBuildError } from './actors/allocdir/errors.ts';
export { type SnapshotServer, type SnapshotServerOptions } from './actors/migrate/snapshot-server.ts';
export type { ChrootStats } from './actors/allocdir/chroot.ts';

// 4. Watchers
export { allocWatcherLogic } from './actors/watchers/index.ts';
export type { AllocWatcherInput, PrevAllocSource, RetryPolicy, ServerRPC } from './actors/watchers/index.ts';
export { DEFAULT_RETRY } from './actors/watchers/types.ts';
export { NomadHttpRPC, NomadHttpError, type NomadHttpRPCOptions } from './actors/rpc/nomad-http-rpc.ts';

// 5. Client, runners, hooks, drivers
export { createClient } from './actors/client/client.ts';
export type { Client, ClientOptions, TemplateClientConfig, TlsFiles } from './actors/client/types.ts';
export type { AllocRunner, AllocResult, InspectionObserver, LogStream, TaskResult } from './actors/runner/api.ts';
export { allocResult } from './model/alloc-result.ts';
export type { HookContext, HookKind, RunnerHook } from './actors/runner/hooks.ts';
export { connectInspector, type WsInspector, type WsInspectorOptions } from './actors/inspect/ws-inspector.ts';
export { openStateStore, StateStoreError, type StateStore, type StateStoreOptions, type StoredAlloc } from './actors/state/state-store.ts';
export { statfsUsage, type FsUsageReader } from './actors/gc/fs-usage.ts';
export type { GcClientOptions } from './actors/gc/options.ts';
export type { FsUsage, GcReason } from './machines/policy/gc.ts';
export type { AllocState } from './model/alloc-state.ts';
export type {
  Driver,
  DriverCapabilities,
  DriverEventSink,
  DriverFingerprint,
  ExecOptions,
  ExecResult,
  ExitResult,
  TaskConfig,
  TaskHandle,
} from './actors/drivers/driver.ts';
export { createMockDriver, type MockDriverOptions } from './actors/drivers/mock.ts';
export { createRawExecDriver, type RawExecDriverOptions } from './actors/drivers/raw-exec.ts';
export { createExecDriver, type ExecDriverOptions } from './actors/drivers/exec.ts';
export {
  createDockerDriver,
  type DockerDriver,
  type DockerDriverOptions,
  type DockerFingerprint,
  type DockerHandleState,
} from './actors/drivers/docker/docker-driver.ts';
export { defaultDockerPluginConfig, type DockerPluginConfig } from './actors/drivers/docker/plugin-config.ts';
export { ImagePullError } from './actors/drivers/docker/images.ts';
export type { ProcessDriverOptions } from './actors/drivers/executor/process-driver.ts';
export { buildTaskEnv, allocIndexFromName, DEFAULT_ENV_DENYLIST, nodeScope, nodeVariablesOf, portEnv, type TaskEnvInput } from './actors/drivers/env.ts';
export { ExecError } from './actors/drivers/exec-process.ts';
export { ArtifactError, ArtifactDownloadError, ArtifactLimitError } from './actors/artifacts/errors.ts';
export { InvalidServiceError } from './actors/services/errors.ts';
export type { CheckStatus } from './machines/policy/check-status.ts';
export { desiredChecks, healthNow, healthParams, unreportedHealth, type HealthParams } from './machines/policy/alloc-health.ts';
export { readTaskLogs, type ReadTaskLogsOptions } from './actors/drivers/logs/reader.ts';

// Resources: task cgroups, limits, stats.
export { detectCgroups, type CgroupDetection, type CgroupOptions } from './actors/cgroups/detect.ts';
export { CgroupSetupError, CgroupUnavailableError } from './actors/cgroups/errors.ts';
export type { CgroupLayout, TaskCgroup } from './actors/cgroups/types.ts';
export { formatUsageLine } from './actors/cgroups/format-usage.ts';
export { cgroupLimits, type CgroupLimits } from './machines/policy/cgroup-limits.ts';

// Machines and policies, for hosts that want to drive or inspect them directly.
export { allocMachine, ALLOC_STATES, type AllocContext, type AllocMachineInput, type TaskSettings } from './machines/alloc/index.ts';
export {
  taskMachine,
  type ExitOutput,
  type RecoverOutput,
  type StartOutput,
  type TaskContext,
  type TaskMachineEvent,
  type TaskMachineInput,
} from './machines/task/index.ts';
export type {
  AllocWatcherOutput,
  WatchChildInput,
  WatcherContext,
  WatchMode,
  WatchPlanEntry,
  WatchReleaseReason,
  WatchResult,
  WatchRole,
} from './machines/watcher.machine.ts';
export type { WatchRequest } from './model/watch.ts';
export type { CoordinatorState } from './machines/policy/lifecycle-gates.ts';
export type { GroupKillEvent } from './machines/policy/kill-order.ts';
export {
  decideRestart,
  defaultRestartPolicy,
  type RestartDecision,
  type RestartInput,
  type RestartSubject,
  type RestartTrackerState,
  restartsOnSuccess,
} from './machines/policy/restarts.ts';
export type { TaskRole, TaskStage } from './machines/policy/task-roles.ts';
export { getClientStatus, type ComputedClientStatus } from './machines/policy/client-status.ts';
export { TaskEventType, taskEvent, type TaskEventInit } from './machines/policy/task-events.ts';
export { MAX_RUN_DURATION_REASON, maxRunDeadline } from './machines/policy/max-run-duration.ts';
export { isReconnect } from './machines/policy/reconnect.ts';
export { UPDATE_MISSING_TASK } from './machines/policy/task-changes.ts';

// berth's own viewer: live page, recordings, replay.
export {
  serveRecording,
  readRecording,
  openLiveViewer,
  InvalidViewerOptionsError,
  RecordingFormatError,
  type ViewerServer,
  type ViewerRecord,
  type Recording,
} from './actors/viewer/index.ts';

// Types the exports above refer to (for the API reference and for typed hosts).
export type { AllocDirHandle, TaskDirHandle, AllocDirFactory } from './actors/allocdir/handle.ts';
export type { RestoreDest } from './actors/allocdir/restore.ts';
export type { CgroupVersion } from './actors/cgroups/types.ts';
export type { CgroupManager, TaskCgroupInput } from './actors/cgroups/manager.ts';
export type { RwLock } from './actors/allocdir/lock.ts';
export type { RecordingHeader } from './actors/viewer/recording.ts';
export type { ViewerServeOptions } from './actors/viewer/server.ts';
export type { ActorKind } from './actors/viewer/static/model.mjs';
export type { SnapshotServerTls } from './actors/migrate/snapshot-server.ts';
export type { ServeSnapshotsOptions } from './actors/migrate/serve.ts';
export type { AllocFSSource } from './actors/allocfs/alloc-fs.ts';
// Loopback by address and the Host check (DNS rebinding), shared by every HTTP listener.
export { checkHostHeader, isLoopbackAddress, normaliseHost } from './model/loopback.ts';
// Constant-time secret comparison (tokens), shared by every listener that checks one.
export { secretMatches } from './model/secret.ts';
// Hostile files and a damaged store: named errors a caller (the agent's HTTP API) can map.
export { AllocFileTypeError, AllocSymlinkLoopError, AllocFileUnreadableError, MAX_READ_AT_BYTES } from './actors/allocfs/index.ts';
export { UnsupportedFileTypeError, type FileKind } from './actors/allocdir/safe-open.ts';
export { quarantineStateStore } from './actors/state/state-store.ts';
