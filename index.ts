/**
 * berth: an embeddable allocation runtime. Nomad's client lifecycle as xstate actors on an RxJS
 * bus. This file only re-exports the public API (CONTRACT.md).
 * @module
 */
// 1. Model
export type { Allocation, ClientStatus, DesiredStatus, DesiredTransition, Disconnect, Job, LifecycleHook, Resources, RestartPolicy, Task, TaskEvent, TaskGroup, TaskState } from './model/types.ts';
export { isTerminated, isServerTerminal, isTerminal, isClientTerminalStatus, shouldMigrate } from './model/status.ts';
export { parseAllocation, isUUID } from './model/parse.ts';
export { parseGoDuration, toMs, formatGoDuration } from './model/duration.ts';
export { realClock, sleep, type Clock } from './model/clock.ts';
export * from './model/errors.ts';
export { addUsage, emptyUsage, type AllocResourceUsage, type CpuStats, type MemoryStats, type ResourceUsage, type TaskResourceUsage } from './model/usage.ts';

// 2. Bus and broadcaster
export { AllocBroadcaster, AllocListener } from './bus/broadcaster.ts';
export { createBus, type Bus } from './bus/bus.ts';
export type { BusMessage, BusMessageMap, BusMessageType } from './bus/messages.ts';

// 3. Allocation and task directories
export { AllocDir, TaskDir, restoreSnapshot, defaultChrootEnv, SnapshotStreamError, MountError, type RestoreSnapshotOptions, type RestoreSnapshotResult } from './actors/allocdir/index.ts';
export {
  createAllocFS, AllocFSError, AllocPathEscapeError, SecretFileReadError, PrivateFileReadError, AllocFileNotFoundError, AllocFSArgumentError,
  type AllocFS, type AllocFileInfo, type AllocFSStreamOptions,
} from './actors/allocfs/index.ts';
export { createSnapshotServer } from './actors/migrate/snapshot-server.ts';

// 4. Watchers
export { allocWatcherLogic } from './actors/watchers/index.ts';
export type { AllocWatcherInput, PrevAllocSource, ServerRPC } from './actors/watchers/index.ts';

// 5. Client, runners, hooks, drivers
export { createClient } from './actors/client/client.ts';
export type { AllocRunner, Client, ClientOptions, InspectionObserver, LogStream, TlsFiles } from './actors/client/types.ts';
export type { HookContext, HookKind, RunnerHook } from './actors/runner/hooks.ts';
export { connectInspector, type WsInspector, type WsInspectorOptions } from './actors/inspect/ws-inspector.ts';
export { openStateStore, StateStoreError, type StateStore, type StateStoreOptions, type StoredAlloc } from './actors/state/state-store.ts';
export { statfsUsage, type FsUsageReader } from './actors/gc/fs-usage.ts';
export type { FsUsage, GcReason } from './machines/policy/gc.ts';
export type { AllocState } from './model/alloc-state.ts';
export type { Driver, DriverCapabilities, ExecOptions, ExecResult, ExitResult, TaskConfig, TaskHandle } from './actors/drivers/driver.ts';
export { createMockDriver } from './actors/drivers/mock.ts';
export { createRawExecDriver } from './actors/drivers/raw-exec.ts';
export { createExecDriver } from './actors/drivers/exec.ts';
export { buildTaskEnv, allocIndexFromName } from './actors/drivers/env.ts';
export { readTaskLogs } from './actors/drivers/logs/reader.ts';

// Resources: task cgroups, limits, stats.
export { detectCgroups, type CgroupDetection, type CgroupOptions } from './actors/cgroups/detect.ts';
export { CgroupSetupError, CgroupUnavailableError } from './actors/cgroups/errors.ts';
export type { CgroupLayout, TaskCgroup } from './actors/cgroups/types.ts';
export { formatUsageLine } from './actors/cgroups/format-usage.ts';
export { cgroupLimits, type CgroupLimits } from './machines/policy/cgroup-limits.ts';

// Machines and policies, for hosts that want to drive or inspect them directly.
export { allocMachine } from './machines/alloc.machine.ts';
export { taskMachine } from './machines/task.machine.ts';
export { decideRestart, defaultRestartPolicy } from './machines/policy/restarts.ts';
export { getClientStatus } from './machines/policy/client-status.ts';
export { TaskEventType } from './machines/policy/task-events.ts';
export { MAX_RUN_DURATION_REASON, maxRunDeadline } from './machines/policy/max-run-duration.ts';
export { isReconnect } from './machines/policy/reconnect.ts';
export { UPDATE_MISSING_TASK } from './machines/policy/task-changes.ts';

// berth's own viewer: live page, recordings, replay.
export { serveRecording, readRecording, openLiveViewer, InvalidViewerOptionsError, RecordingFormatError, type ViewerServer, type ViewerRecord, type Recording } from './actors/viewer/index.ts';
