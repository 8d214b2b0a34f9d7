/**
 * `berth alloc <status|logs|stop|restart|signal|fs|exec|checks>`: allocations on a berth agent, as
 * `nomad alloc` does them. Ids may be unique prefixes.
 * @module
 */
import { allocChecksCommand } from '../alloc/checks.ts';
import { allocExecCommand } from '../alloc/exec.ts';
import { allocFsCommand } from '../alloc/fs.ts';
import { allocRestartCommand, allocSignalCommand, allocStopCommand } from '../alloc/lifecycle.ts';
import { allocLogsCommand } from '../alloc/logs.ts';
import { allocStatusCommand } from '../alloc/status.ts';
import { commandGroup } from '../nomad/group.ts';

/** `berth alloc`. */
export const allocCommand = commandGroup('alloc', 'inspect and control allocations on a berth agent', [
  allocStatusCommand,
  allocLogsCommand,
  allocStopCommand,
  allocRestartCommand,
  allocSignalCommand,
  allocFsCommand,
  allocExecCommand,
  allocChecksCommand,
]);
