/**
 * `berth alloc stop|restart|signal`: asking the agent to stop an allocation (it is replaced),
 * restart its tasks, or signal them.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { writeLine } from '../io.ts';
import { short } from '../nomad/table.ts';
import { monitorEval } from '../job/monitor.ts';

const STOP_HELP = `usage: berth alloc stop [-detach] ALLOC\n\nStops the allocation; its job's evaluation places a replacement.\nExit codes: 0 stopped; 1 no such allocation or an error; 2 usage error.`;
const RESTART_HELP = `usage: berth alloc restart [-all-tasks] ALLOC [TASK]\n\nRestarts TASK, or every task.\nExit codes: 0 restarted; 1 no such allocation or task, or an error; 2 usage error.`;
const SIGNAL_HELP = `usage: berth alloc signal [-s SIGNAL] ALLOC [TASK]\n\nSends SIGNAL (default SIGKILL) to TASK, or to every running task.\nExit codes: 0 sent; 1 no such allocation or task, or an error; 2 usage error.`;
const ALLOC_AND_TASK = 'expects an allocation id and optionally a task';

/** `berth alloc stop [-detach] ALLOC`. */
export const allocStopCommand = apiCommand(
  { command: 'alloc stop', summary: 'stop an allocation (the scheduler places a replacement)', help: STOP_HELP, args: [1, 'expects one allocation id'] },
  { detach: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const a = await api.resolveAlloc(positionals[0]!);
    const { body } = await api.json<{ EvalID: string }>('POST', `/v1/allocation/${a.ID}/stop`);
    if (flags.detach) writeLine(io.stdout, body.EvalID);
    else await monitorEval(api, io, body.EvalID);
    return 0;
  },
);

/** `berth alloc restart ALLOC [TASK]`. */
export const allocRestartCommand = apiCommand(
  { command: 'alloc restart', summary: "restart an allocation's tasks", help: RESTART_HELP, args: [[1, 2], ALLOC_AND_TASK] },
  { 'all-tasks': 'boolean', task: 'string', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const a = await api.resolveAlloc(positionals[0]!);
    const task = (flags.task as string | undefined) ?? positionals[1];
    await api.json('POST', `/v1/client/allocation/${a.ID}/restart`, task ? { TaskName: task } : { AllTasks: true });
    writeLine(io.stdout, `Allocation "${short(a.ID)}" restarted`);
    return 0;
  },
);

/** `berth alloc signal [-s SIGNAL] ALLOC [TASK]`. */
export const allocSignalCommand = apiCommand(
  { command: 'alloc signal', summary: "signal an allocation's tasks", help: SIGNAL_HELP, args: [[1, 2], ALLOC_AND_TASK] },
  { s: 'string', task: 'string', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const a = await api.resolveAlloc(positionals[0]!);
    const task = (flags.task as string | undefined) ?? positionals[1];
    await api.json('POST', `/v1/client/allocation/${a.ID}/signal`, { Signal: (flags.s as string | undefined) ?? 'SIGKILL', ...(task ? { Task: task } : {}) });
    writeLine(io.stdout, `Signal sent to allocation "${short(a.ID)}"`);
    return 0;
  },
);
