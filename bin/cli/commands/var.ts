/**
 * `berth var <put|get|list|purge>`: Nomad Variables on a berth agent, as `nomad var` does them.
 * @module
 */
import { commandGroup } from '../nomad/group.ts';
import { varGetCommand } from '../var/get.ts';
import { varListCommand } from '../var/list.ts';
import { varPurgeCommand } from '../var/purge.ts';
import { varPutCommand } from '../var/put.ts';

/** `berth var`. */
export const varCommand = commandGroup('var', 'read and write Nomad variables on a berth agent', [
  varPutCommand,
  varGetCommand,
  varListCommand,
  varPurgeCommand,
]);
