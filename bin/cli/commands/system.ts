/**
 * `berth system gc`: the agent's server-side garbage collection now (Nomad's `nomad system gc`):
 * every terminal evaluation, allocation and deployment and every dead job, whatever its age.
 * @module
 */
import { AgentApi } from '../nomad/api.ts';
import { NO_ARGS, nomadCommand } from '../nomad/nomad-command.ts';
import { commandGroup } from '../nomad/group.ts';

const GC_HELP = `usage: berth system gc

Runs the agent's server garbage collector at once, ignoring its age thresholds (Nomad's
nomad system gc). The client removes the collected allocations' directories.

Exit codes: 0 done; 1 an error; 2 usage error.`;

const gc = nomadCommand(
  { command: 'system gc', summary: 'collect terminal evaluations, allocations, deployments and dead jobs now', help: GC_HELP, args: NO_ARGS },
  {},
  async () => {
    await new AgentApi().json('PUT', '/v1/system/gc');
    return 0;
  },
);

/** `berth system`. */
export const systemCommand = commandGroup('system', "the agent's system maintenance", [gc]);
