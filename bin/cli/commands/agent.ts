/**
 * `berth agent [-dev] [-config FILE]... [-data-dir DIR] [-bind ADDR] [-port N] [-repair-state]`: one process that
 * holds jobs, places and runs them, and serves Nomad's HTTP API (see docs/agent.md). Runs in the
 * foreground until SIGINT, SIGTERM or SIGHUP (an uncaught error also closes it, then exits 1).
 * @module
 */
import { startAgent } from '../../../agent/agent.ts';
import { PortInUseError } from '../../../agent/http/port-owner.ts';
import { DataDirLockedError } from '../../../agent/state/data-dir-lock.ts';
import { AgentConfigError, loadAgentConfigFile, resolveAgentConfig, type AgentFlags } from '../../../agent/config/config.ts';
import { InputError, UsageError } from '../errors.ts';
import { ExitCode } from '../exit-codes.ts';
import { writeLine } from '../io.ts';
import { NO_ARGS, nomadCommand } from '../nomad/nomad-command.ts';

const HELP = `usage: berth agent [-dev] [-config FILE]... [-data-dir DIR] [-bind ADDR] [-port N] [-repair-state]

Runs a one-node agent: the jobs, the evaluations, the scheduler, the client that runs the
allocations, and Nomad's HTTP API on ADDR:N (default 127.0.0.1:4646). Stop it with Ctrl-C.
  -dev          a temporary data dir, everything defaulted; allocs are destroyed on exit
  -config FILE  Nomad's agent config (HCL or .json); repeat to merge several
  -data-dir DIR where state lives (default $BERTH_DATA_DIR, else /var/lib/berth as root,
                else $XDG_DATA_HOME/berth); tasks outlive a restart of the agent and are
                reattached by the next one
  -bind ADDR    address to listen on (default 127.0.0.1)
  -port N       HTTP port (default 4646; 0 picks a free one)
  -repair-state when the client's state store (DATA_DIR/client/state.db) is damaged: move it
                aside, start a fresh one, reattach the tasks whose executor still answers,
                stop and report the others (without it, such a start fails and says so)
The first line on stdout is "berth agent listening on <url>".
Exit codes: 0 stopped by a signal; 1 failed to start; 2 usage or config error, the data dir
held by another agent, or the port in use.`;

/** `berth agent`. */
export const agentCommand = nomadCommand(
  { command: 'agent', summary: "run a one-node agent serving Nomad's HTTP API", help: HELP, args: NO_ARGS },
  { dev: 'boolean', config: 'multi', 'data-dir': 'string', bind: 'string', port: 'string', 'repair-state': 'boolean' },
  async ({ flags, io }) => {
    const port = flags.port === undefined ? undefined : Number(flags.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
      throw new UsageError(`-port must be a port number, got ${JSON.stringify(flags.port)}`, 'agent');
    const agentFlags: AgentFlags = {
      dev: flags.dev === true,
      repairState: flags['repair-state'] === true,
      ...(flags['data-dir'] !== undefined ? { dataDir: flags['data-dir'] as string } : {}),
      ...(flags.bind !== undefined ? { bindAddr: flags.bind as string } : {}),
      ...(port !== undefined ? { port } : {}),
    };
    let config;
    try {
      const patches = [];
      for (const f of (flags.config as string[] | undefined) ?? []) patches.push(await loadAgentConfigFile(f));
      config = resolveAgentConfig(patches, agentFlags);
    } catch (e) {
      if (e instanceof AgentConfigError) throw new InputError('agent config', e.message);
      throw e;
    }
    let agent;
    try {
      agent = await startAgent(config, { log: (line) => writeLine(io.stderr, `${new Date().toISOString()} [agent] ${line}`) });
    } catch (e) {
      // What the user can fix (another agent on the dir or the port) is an input error: exit 2.
      if (e instanceof DataDirLockedError || e instanceof PortInUseError) throw new InputError('agent', e.message, [], { cause: e });
      throw e;
    }
    writeLine(io.stdout, `berth agent listening on ${agent.url}`);
    // Every exit path the process can see closes the agent first (a -dev agent destroys its
    // allocs and removes its dir): the signals a terminal or supervisor sends, and an error that
    // would otherwise end the process with its tasks and mounts left behind.
    const stop = await new Promise<{ why: string; failed: boolean }>((resolve) => {
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => resolve({ why: `caught ${sig}`, failed: false }));
      process.once('uncaughtException', (e) => resolve({ why: `uncaught exception: ${e.stack ?? String(e)}`, failed: true }));
      process.once('unhandledRejection', (e) =>
        resolve({ why: `unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`, failed: true }),
      );
    });
    writeLine(io.stderr, `${new Date().toISOString()} [agent] ${stop.why}, stopping`);
    await agent.close();
    if (stop.failed) return ExitCode.failed;
    return ExitCode.ok;
  },
);
