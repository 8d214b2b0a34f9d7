/**
 * `berth demo [--inspect] [--port N]`: the preemption scenario on real processes (`npm start`).
 * @module
 */
import { runDemo } from '../../demo.ts';
import { parseCommandArgs, printHelp, type Command } from '../command.ts';
import { UsageError } from '../errors.ts';
import { parsePort, withInspector } from '../inspector.ts';

const HELP = `usage: berth demo [--inspect [--port N]]

Runs the preemption demo on raw_exec: three low-priority allocations, a high-priority one that
preempts two of them and waits (one watcher per victim), then the remote path of Nomad #10200.
Prints a timeline, each task's first log lines and a summary, cleans up and exits 0.
  --inspect  serve the Stately inspector relay on --port (default 8080)`;

export const demoCommand: Command = {
  name: 'demo',
  summary: 'the preemption demo on real processes (what npm start runs)',
  help: HELP,
  async run(argv, io) {
    const { values, positionals } = parseCommandArgs('demo', argv, { inspect: { type: 'boolean' }, port: { type: 'string' } });
    if (values.help) return printHelp(io, HELP);
    if (positionals.length) throw new UsageError(`demo takes no arguments, got ${JSON.stringify(positionals[0])}`, 'demo');
    const port = parsePort('demo', values.port);
    await withInspector(io, !!values.inspect, port, (insp) => runDemo(insp ? { inspect: insp.inspect } : {}));
    return 0;
  },
};
