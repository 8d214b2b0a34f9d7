/**
 * `berth alloc stop|restart|signal`: asking the agent to stop an allocation (it is replaced),
 * restart its tasks, or signal them.
 * @module
 */
import { type Command } from '../command.ts';
import { apiCommandFlags } from '../nomad/api-command.ts';
import { writeLine } from '../io.ts';
import { short } from '../nomad/table.ts';
import { monitorEval } from '../job/monitor.ts';

/** `berth alloc stop [-detach] ALLOC`. */
export const allocStopCommand: Command = {
  name: 'stop',
  summary: 'stop an allocation (the scheduler places a replacement)',
  help: `usage: berth alloc stop [-detach] ALLOC\n\nStops the allocation; its job's evaluation places a replacement.\nExit codes: 0 stopped; 1 no such allocation or an error; 2 usage error.`,
  async run(argv, io) {
    const { flags, positionals, exit, api } = apiCommandFlags(
      'alloc stop',
      argv,
      { detach: 'boolean', verbose: 'boolean' },
      { io, help: this.help, positionals: 1, usage: 'expects one allocation id' },
    );
    if (exit !== undefined) return exit;
    const a = await api.resolveAlloc(positionals[0]!);
    const { body } = await api.json<{ EvalID: string }>('POST', `/v1/allocation/${a.ID}/stop`);
    if (flags.detach) writeLine(io.stdout, body.EvalID);
    else await monitorEval(api, io, body.EvalID);
    return 0;
  },
};

/** `berth alloc restart ALLOC [TASK]`. */
export const allocRestartCommand: Command = {
  name: 'restart',
  summary: "restart an allocation's tasks",
  help: `usage: berth alloc restart [-all-tasks] ALLOC [TASK]\n\nRestarts TASK, or every task.\nExit codes: 0 restarted; 1 no such allocation or task, or an error; 2 usage error.`,
  async run(argv, io) {
    const { flags, positionals, exit, api } = apiCommandFlags(
      'alloc restart',
      argv,
      { 'all-tasks': 'boolean', task: 'string', verbose: 'boolean' },
      { io, help: this.help, positionals: [1, 2], usage: 'expects an allocation id and optionally a task' },
    );
    if (exit !== undefined) return exit;
    const a = await api.resolveAlloc(positionals[0]!);
    const task = (flags.task as string | undefined) ?? positionals[1];
    await api.json('POST', `/v1/client/allocation/${a.ID}/restart`, task ? { TaskName: task } : { AllTasks: true });
    writeLine(io.stdout, `Allocation "${short(a.ID)}" restarted`);
    return 0;
  },
};

/** `berth alloc signal [-s SIGNAL] ALLOC [TASK]`. */
export const allocSignalCommand: Command = {
  name: 'signal',
  summary: "signal an allocation's tasks",
  help: `usage: berth alloc signal [-s SIGNAL] ALLOC [TASK]\n\nSends SIGNAL (default SIGKILL) to TASK, or to every running task.\nExit codes: 0 sent; 1 no such allocation or task, or an error; 2 usage error.`,
  async run(argv, io) {
    const { flags, positionals, exit, api } = apiCommandFlags(
      'alloc signal',
      argv,
      { s: 'string', task: 'string', verbose: 'boolean' },
      { io, help: this.help, positionals: [1, 2], usage: 'expects an allocation id and optionally a task' },
    );
    if (exit !== undefined) return exit;
    const a = await api.resolveAlloc(positionals[0]!);
    const task = (flags.task as string | undefined) ?? positionals[1];
    await api.json('POST', `/v1/client/allocation/${a.ID}/signal`, { Signal: (flags.s as string | undefined) ?? 'SIGKILL', ...(task ? { Task: task } : {}) });
    writeLine(io.stdout, `Signal sent to allocation "${short(a.ID)}"`);
    return 0;
  },
};
