/**
 * berth's real task drivers (raw_exec, exec), their environment builder, signals and log files.
 * @module
 */
export { createRawExecDriver, type RawExecDriverOptions } from './raw-exec.ts';
export { createExecDriver, lookupUser, type ExecDriverOptions } from './exec.ts';
export {
  ExecutorLostError,
  TaskRecoveryError,
  TaskStillRunningError,
  parseCommandConfig,
  type ProcessDriverOptions,
  type ProcessHandleState,
} from './executor/process-driver.ts';
export { SUPERVISOR_PATH, defaultSupervisorDir, supervisorSocketPath } from './executor/client.ts';
export type { ExecutorRequest, ExecutorResponse, ExecutorSpec, ExecutorState, ExitRecord, ReadyLine, SupervisorRequest } from './executor/protocol.ts';
export { buildTaskEnv, interpolateEnv, DEFAULT_ENV_DENYLIST, type TaskEnvInput } from './env.ts';
export { SHIM_MARKER } from './executor/shim.mjs';
export { signalName, signalNumber, isSignal } from './signals.ts';
export { readTaskLogs, logFileIndices, type LogStream, type ReadTaskLogsOptions } from './logs/reader.ts';
export { FileRotator, rotatingStream } from './logs/rotator.mjs';
export {
  createDockerDriver,
  dockerClient,
  parseDockerConfig,
  type DockerDriver,
  type DockerDriverOptions,
  type DockerFingerprint,
  type DockerHandleState,
} from './docker/docker-driver.ts';
export { defaultDockerPluginConfig, DEFAULT_ALLOW_CAPS, EXTRA_LABEL_NAMES, type DockerPluginConfig } from './docker/plugin-config.ts';
export { ImagePullError } from './docker/images.ts';
export { LABEL_ALLOC_ID, containerName } from './docker/container-spec.ts';
