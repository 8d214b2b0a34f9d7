/**
 * `berth job <run|stop|status|plan>`: jobs on a berth agent, as `nomad job` does them.
 * @module
 */
import { jobPlanCommand } from '../job/plan.ts';
import { jobRunCommand } from '../job/run.ts';
import { jobStatusCommand } from '../job/status.ts';
import { jobStopCommand } from '../job/stop.ts';
import { commandGroup } from '../nomad/group.ts';

/** `berth job`. */
export const jobCommand = commandGroup('job', 'run, stop, inspect and plan jobs on a berth agent', [
  jobRunCommand,
  jobStopCommand,
  jobStatusCommand,
  jobPlanCommand,
]);
