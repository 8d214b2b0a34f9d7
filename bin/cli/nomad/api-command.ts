/**
 * The preamble of a command that talks to an agent: its flags parsed with the {@link API_FLAGS}
 * beside its own, and the {@link AgentApi} those flags name.
 * @module
 */
import { AgentApi, API_FLAGS } from './api.ts';
import { commandFlags, type CommandShape, type FlagKind, type NomadArgs } from './flags.ts';

/** What {@link apiCommandFlags} answers: `exit` for `-help` (the command returns it), else the parsed flags and the agent's API. */
export type ApiCommandArgs = { exit: number; flags?: undefined; positionals?: undefined; api?: undefined } | (NomadArgs & { exit?: undefined; api: AgentApi });

/**
 * {@link commandFlags} for a command that talks to an agent: `spec` is the command's own flags
 * (the {@link API_FLAGS} are added), and `api` talks to the agent they name.
 * @example
 * const { flags, positionals, api, exit } = apiCommandFlags('job eval', argv, {}, { io, help: HELP, positionals: 1, usage: 'expects one job id' });
 * if (exit !== undefined) return exit;
 */
export function apiCommandFlags(command: string, argv: string[], spec: Record<string, FlagKind>, shape: CommandShape): ApiCommandArgs {
  const args = commandFlags(command, argv, { ...API_FLAGS, ...spec }, shape);
  if (args.exit !== undefined) return { exit: args.exit };
  return { ...args, exit: undefined, api: new AgentApi(args.flags) };
}
