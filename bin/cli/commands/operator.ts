/**
 * `berth operator scheduler get-config|set-config`: the scheduler's preemption settings;
 * `berth operator root keyring rotate|list`: the root keys that seal variables;
 * `berth operator raft list-peers`: the raft peers (the one-node agent is its own leader).
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { NO_ARGS } from '../nomad/nomad-command.ts';
import { UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { commandGroup } from '../nomad/group.ts';
import { kv, table } from '../nomad/table.ts';
import { operatorRootCommand } from './operator-keyring.ts';

type Obj = Record<string, unknown>;
const FLAGS = {
  'preempt-service-scheduler': 'ServiceSchedulerEnabled',
  'preempt-batch-scheduler': 'BatchSchedulerEnabled',
  'preempt-sysbatch-scheduler': 'SysBatchSchedulerEnabled',
  'preempt-system-scheduler': 'SystemSchedulerEnabled',
} as const;

const GETCONFIG_HELP = 'usage: berth operator scheduler get-config [-json]\n\nExit codes: 0 shown; 1 an error; 2 usage error.';
const SETCONFIG_HELP = `usage: berth operator scheduler set-config [-preempt-service-scheduler=true|false]
       [-preempt-batch-scheduler=...] [-preempt-sysbatch-scheduler=...] [-preempt-system-scheduler=...]

Exit codes: 0 updated; 1 an error; 2 usage error.`;
const LISTPEERS_HELP =
  'usage: berth operator raft list-peers [-stale] [-json]\n\nPrints the raft peers as nomad does (Node, ID, Address, State, Voter, RaftProtocol).\nExit codes: 0 listed; 1 an error; 2 usage error.';

const getConfig = apiCommand(
  { command: 'operator scheduler get-config', summary: "show the scheduler's configuration", help: GETCONFIG_HELP },
  { json: 'boolean' },
  async ({ flags, api, io }) => {
    const { body } = await api.get<{ SchedulerConfig: Obj }>('/v1/operator/scheduler/configuration');
    if (flags.json) {
      writeLine(io.stdout, JSON.stringify(body, null, 2));
      return 0;
    }
    const p = body.SchedulerConfig.PreemptionConfig as Record<string, boolean>;
    writeLine(
      io.stdout,
      kv([
        ['Scheduler Algorithm', body.SchedulerConfig.SchedulerAlgorithm],
        ['Preemption System Scheduler', p.SystemSchedulerEnabled],
        ['Preemption Service Scheduler', p.ServiceSchedulerEnabled],
        ['Preemption Batch Scheduler', p.BatchSchedulerEnabled],
        ['Preemption SysBatch Scheduler', p.SysBatchSchedulerEnabled],
      ]),
    );
    return 0;
  },
);

const setConfig = apiCommand(
  { command: 'operator scheduler set-config', summary: "change the scheduler's preemption settings", help: SETCONFIG_HELP, args: NO_ARGS },
  Object.fromEntries(Object.keys(FLAGS).map((k) => [k, 'boolean' as const])),
  async ({ flags, api, io }) => {
    const pre: Record<string, boolean> = {};
    for (const [flag, key] of Object.entries(FLAGS)) if (flags[flag] !== undefined) pre[key] = flags[flag] as boolean;
    if (Object.keys(pre).length === 0) throw new UsageError('give at least one -preempt-*-scheduler flag', 'operator scheduler set-config');
    await api.json('POST', '/v1/operator/scheduler/configuration', { PreemptionConfig: pre });
    writeLine(io.stdout, 'Scheduler configuration updated!');
    return 0;
  },
);

interface RaftServer {
  ID: string;
  Node: string;
  Address: string;
  Leader: boolean;
  Voter: boolean;
  RaftProtocol: string;
}

const listPeers = apiCommand(
  { command: 'operator raft list-peers', summary: 'list the raft peers', help: LISTPEERS_HELP, args: NO_ARGS },
  { json: 'boolean', stale: 'boolean' },
  async ({ flags, api, io }) => {
    const { body } = await api.get<{ Servers: RaftServer[] }>('/v1/operator/raft/configuration');
    if (flags.json) {
      writeLine(io.stdout, JSON.stringify(body, null, 2));
      return 0;
    }
    const servers = [...body.Servers].sort((a, b) => (a.Node < b.Node ? -1 : a.Node > b.Node ? 1 : 0));
    writeLine(
      io.stdout,
      table(
        ['Node', 'ID', 'Address', 'State', 'Voter', 'RaftProtocol'],
        servers.map((s) => [s.Node, s.ID, s.Address, s.Leader ? 'leader' : 'follower', s.Voter, s.RaftProtocol]),
      ),
    );
    return 0;
  },
);

/** `berth operator`. */
export const operatorCommand = commandGroup('operator', "operate the agent's scheduler, keyring and raft", [
  commandGroup('scheduler', "the scheduler's configuration", [getConfig, setConfig]),
  commandGroup('raft', "the agent's raft peers", [listPeers]),
  operatorRootCommand,
]);
