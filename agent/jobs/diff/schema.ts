/**
 * The primitive fields of the Nomad server structs the diff reads (`nomad/structs`), by their API
 * JSON names, which are the structs' field names. Only fields `flatmap.Flatten(x, filter, true)`
 * keeps are listed: plain strings, integers (durations are nanoseconds), bools, and
 * `map[string]string`s. Fields Nomad filters out of a diff are left out here.
 * @module
 */
import type { Schema } from './flat.ts';

/** `structs.Job` (ID, Status, StatusDescription, Version, Stable, SubmitTime, indexes and NomadTokenID filtered). */
export const JOB: Schema = {
  Stop: 'b',
  Region: 's',
  Namespace: 's',
  ParentID: 's',
  Name: 's',
  Type: 's',
  Priority: 'i',
  AllAtOnce: 'b',
  NodePool: 's',
  Dispatched: 'b',
  DispatchIdempotencyToken: 's',
  Meta: 'm',
  ConsulNamespace: 's',
  VaultNamespace: 's',
};

/** `structs.TaskGroup` (Name filtered; its pointer durations are skipped, `ShutdownDelay` is added by hand). */
export const GROUP: Schema = { Count: 'i', Meta: 'm', PreventRescheduleOnLost: 'b' };

/** `structs.Task` (Name and Config filtered). */
export const TASK: Schema = {
  Driver: 's',
  User: 's',
  Env: 'm',
  Meta: 'm',
  KillTimeout: 'i',
  Leader: 'b',
  ShutdownDelay: 'i',
  KillSignal: 's',
  Kind: 's',
};

export const CONSTRAINT: Schema = { LTarget: 's', RTarget: 's', Operand: 's' };
export const AFFINITY: Schema = { LTarget: 's', RTarget: 's', Operand: 's', Weight: 'i' };

export const RESTART_POLICY: Schema = { Attempts: 'i', Interval: 'i', Delay: 'i', Mode: 's', RenderTemplates: 'b' };
export const MIGRATE: Schema = { MaxParallel: 'i', HealthCheck: 's', MinHealthyTime: 'i', HealthyDeadline: 'i' };
export const RESCHEDULE_POLICY: Schema = {
  Attempts: 'i',
  Interval: 'i',
  Delay: 'i',
  DelayFunction: 's',
  MaxDelay: 'i',
  Unlimited: 'b',
};
export const EPHEMERAL_DISK: Schema = { Sticky: 'b', SizeMB: 'i', Migrate: 'b' };
export const CONSUL: Schema = { Namespace: 's', Cluster: 's', Partition: 's' };
/** `structs.UpdateStrategy` (a group's `Update`; Nomad filters `Stagger`). */
export const UPDATE: Schema = {
  Stagger: 'i',
  MaxParallel: 'i',
  HealthCheck: 's',
  MinHealthyTime: 'i',
  HealthyDeadline: 'i',
  ProgressDeadline: 'i',
  AutoRevert: 'b',
  AutoPromote: 'b',
  Canary: 'i',
};

/** `structs.NetworkResource` (Device, CIDR, IP and MBits filtered). */
export const NETWORK: Schema = { Mode: 's', Hostname: 's' };
export const PORT: Schema = { Label: 's', Value: 'i', To: 'i', HostNetwork: 's', IgnoreCollision: 'b' };

/** `structs.ScalingPolicy` (ID, Type, indexes and the job, group and namespace targets filtered). */
export const SCALING: Schema = { Target: 'm', Min: 'i', Max: 'i', Enabled: 'b' };

export const SERVICE: Schema = {
  Name: 's',
  TaskName: 's',
  PortLabel: 's',
  AddressMode: 's',
  Address: 's',
  EnableTagOverride: 'b',
  Meta: 'm',
  CanaryMeta: 'm',
  TaggedAddresses: 'm',
  Namespace: 's',
  OnUpdate: 's',
  Provider: 's',
  Cluster: 's',
  Kind: 's',
};

/** `structs.ServiceCheck` (its `Args` is a slice, so Nomad's diff never shows it). */
export const CHECK: Schema = {
  Name: 's',
  Type: 's',
  Command: 's',
  Path: 's',
  Protocol: 's',
  PortLabel: 's',
  Expose: 'b',
  AddressMode: 's',
  Interval: 'i',
  Timeout: 'i',
  InitialStatus: 's',
  Notes: 's',
  TLSServerName: 's',
  TLSSkipVerify: 'b',
  Method: 's',
  GRPCService: 's',
  GRPCUseTLS: 'b',
  TaskName: 's',
  SuccessBeforePassing: 'i',
  FailuresBeforeCritical: 'i',
  FailuresBeforeWarning: 'i',
  Body: 's',
  OnUpdate: 's',
};
export const CHECK_RESTART: Schema = { Limit: 'i', Grace: 'i', IgnoreWarnings: 'b' };

export const VOLUME: Schema = {
  Name: 's',
  Type: 's',
  Source: 's',
  ReadOnly: 'b',
  Sticky: 'b',
  AccessMode: 's',
  AttachmentMode: 's',
  PerAlloc: 'b',
};
export const VOLUME_MOUNT: Schema = { Volume: 's', Destination: 's', ReadOnly: 'b', PropagationMode: 's', SELinuxLabel: 's' };

export const RESOURCES: Schema = { CPU: 'i', Cores: 'i', MemoryMB: 'i', MemoryMaxMB: 'i', DiskMB: 'i', IOPS: 'i', SecretsMB: 'i' };
export const LOG_CONFIG: Schema = { MaxFiles: 'i', MaxFileSizeMB: 'i', Disabled: 'b' };
export const DISPATCH_PAYLOAD: Schema = { File: 's' };

export const ARTIFACT: Schema = {
  GetterSource: 's',
  GetterOptions: 'm',
  GetterHeaders: 'm',
  GetterMode: 's',
  GetterInsecure: 'b',
  RelativeDest: 's',
  Chown: 'b',
};

/** `structs.Template` (`Uid` and `Gid` are pointers, added by hand when set). */
export const TEMPLATE: Schema = {
  SourcePath: 's',
  DestPath: 's',
  EmbeddedTmpl: 's',
  ChangeMode: 's',
  ChangeSignal: 's',
  Once: 'b',
  Splay: 'i',
  Perms: 's',
  LeftDelim: 's',
  RightDelim: 's',
  Envvars: 'b',
  VaultGrace: 'i',
  ErrMissingKey: 'b',
};
export const CHANGE_SCRIPT: Schema = { Command: 's', Timeout: 'i', FailOnError: 'b', RunOnFirstRender: 'b' };

export const PERIODIC: Schema = { Enabled: 'b', Spec: 's', SpecType: 's', ProhibitOverlap: 'b', TimeZone: 's' };
export const PARAMETERIZED: Schema = { Payload: 's' };
