/**
 * `berth system gc`: the agent's server-side garbage collection now (Nomad's `nomad system gc`):
 * every terminal evaluation, allocation and deployment and every dead job, whatever its age.
 * @module
 */
import { type Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { AgentApi } from '../nomad/api.ts';
import { commandFlags } from '../nomad/flags.ts';
import { commandGroup } from '../nomad/group.ts';

const gc: Command = {
  name: 'gc',
  summary: 'collect terminal evaluations, allocations, deployments and dead jobs now',
  help: `usage: berth system gc

Runs the agent's server garbage collector at once, ignoring its age thresholds (Nomad's
nomad system gc). The client removes the collected allocations' directories.

Exit codes: 0 done; 1 an error; 2 usage error.`,
  async run(argv, io) {
    const { positionals, exit } = commandFlags('system gc', argv, {}, { io, help: this.help });
    if (exit !== undefined) return exit;
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, 'system gc');
    await new AgentApi().json('PUT', '/v1/system/gc');
    return 0;
  },
};

/** `berth system`. */
export const systemCommand = commandGroup('system', "the agent's system maintenance", [gc]);
