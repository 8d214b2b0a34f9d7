/**
 * Preemption's switches under their three names, in one table: the field berth keeps
 * ({@link PreemptionConfig}, one type shared with the scheduler), the key of Nomad's
 * `preemption_config` block, and the field of Nomad's API `PreemptionConfig`.
 * @module
 */
import type { PreemptionConfig } from '../scheduler/types.ts';

export type { PreemptionConfig };

/** One switch: berth's field, Nomad's HCL key, Nomad's API field. */
export interface PreemptionKey {
  field: keyof PreemptionConfig;
  hcl: string;
  api: string;
}

/** Every switch, in the order Nomad's API writes them. */
export const PREEMPTION_KEYS: readonly PreemptionKey[] = [
  { field: 'systemSchedulerEnabled', hcl: 'system_scheduler_enabled', api: 'SystemSchedulerEnabled' },
  { field: 'sysbatchSchedulerEnabled', hcl: 'sysbatch_scheduler_enabled', api: 'SysBatchSchedulerEnabled' },
  { field: 'batchSchedulerEnabled', hcl: 'batch_scheduler_enabled', api: 'BatchSchedulerEnabled' },
  { field: 'serviceSchedulerEnabled', hcl: 'service_scheduler_enabled', api: 'ServiceSchedulerEnabled' },
];
