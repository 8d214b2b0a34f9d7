/**
 * A command that talks to an agent: a {@link nomadCommand} that takes the {@link API_FLAGS}
 * beside its own flags, and gets the {@link AgentApi} they name.
 * @module
 */
import type { Command } from '../command.ts';
import { AgentApi, API_FLAGS } from './api.ts';
import type { FlagKind } from './flags.ts';
import { nomadCommand, type NomadCommandArgs, type NomadCommandMeta } from './nomad-command.ts';

/** What an agent command's own code gets: {@link NomadCommandArgs} and the agent's API. */
export interface ApiCommandArgs extends NomadCommandArgs {
  api: AgentApi;
}

/**
 * The {@link Command} `meta` describes, taking the {@link API_FLAGS} and its own `flags`.
 * @example
 * export const jobEvalCommand = apiCommand(
 *   { command: 'job eval', summary: 'evaluate a job again', help: HELP, args: [1, 'expects one job id'] },
 *   { detach: 'boolean' },
 *   async ({ flags, positionals, api, io }) => ...,
 * );
 */
export function apiCommand(meta: NomadCommandMeta, flags: Record<string, FlagKind>, run: (args: ApiCommandArgs) => Promise<number>): Command {
  return nomadCommand(meta, { ...API_FLAGS, ...flags }, (args) => run({ ...args, api: new AgentApi(args.flags) }));
}
