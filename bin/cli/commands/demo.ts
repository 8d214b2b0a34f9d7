/**
 * `berth demo [--inspect] [--view] [--record FILE]`: the preemption scenario on real processes
 * (`npm start`).
 * @module
 */
import { openLiveViewer, untilInterrupted } from '../../../actors/viewer/open.ts';
import { runDemo } from '../../demo.ts';
import { flagCommand } from '../command.ts';
import { UsageError } from '../errors.ts';
import { signalExitCode } from '../exit-codes.ts';
import { parsePort, withInspector } from '../inspector.ts';
import { writeLine } from '../io.ts';
import { VIEWER_FLAGS, VIEWER_HELP, viewerOptions } from '../viewer-flags.ts';

const HELP = `usage: berth demo [--inspect [--port N]] [--view] [--record FILE]

Runs the preemption demo on raw_exec: three low-priority allocations, a high-priority one that
preempts two of them and waits (one watcher per victim), then the remote path of Nomad #10200.
Prints a timeline, each task's first log lines and a summary, cleans up and exits 0.
  --inspect  serve the Stately inspector relay on --port (default 8080)
${VIEWER_HELP}
With --view the demo waits up to 60 s for a page, and holds the allocations until Ctrl-C.`;

export const demoCommand = flagCommand(
  { name: 'demo', summary: 'the preemption demo on real processes (what npm start runs)', help: HELP },
  { inspect: { type: 'boolean' }, port: { type: 'string' }, ...VIEWER_FLAGS },
  async ({ values, positionals, io }) => {
    if (positionals.length) throw new UsageError(`demo takes no arguments, got ${JSON.stringify(positionals[0])}`, 'demo');
    const port = parsePort('demo', values.port);
    const log = (line: string) => writeLine(io.stdout, line);
    const viewOpts = viewerOptions('demo', values, log);
    const viewer = values.view
      ? {
          onClient: async (client: Parameters<typeof openLiveViewer>[0]) => {
            const srv = await openLiveViewer(client, viewOpts);
            log('viewer: waiting up to 60 s for a page to connect…');
            await Promise.race([srv.pageConnected(), new Promise((r) => setTimeout(r, 60_000).unref())]);
          },
          hold: async () => {
            log('viewer: everything is running; press Ctrl-C to stop the allocations and exit');
            await untilInterrupted();
          },
        }
      : {};
    // The demo is short and cleans up in its own `finally`: a first signal lets it finish (so no
    // task, executor or temp dir is left), a second one quits at once. With --view, Ctrl-C is how
    // the held demo ends, so the viewer's wait takes it instead.
    let stoppedBy: 'SIGINT' | 'SIGTERM' | undefined;
    const onSignal = (sig: 'SIGINT' | 'SIGTERM') => {
      if (stoppedBy) process.exit(signalExitCode(sig));
      stoppedBy = sig;
      writeLine(io.stderr, `berth: ${sig}: the demo ends and cleans up in a few seconds (again to quit at once, leaving its tasks behind)`);
    };
    const handlers = values.view ? [] : (['SIGINT', 'SIGTERM'] as const).map((sig) => [sig, () => onSignal(sig)] as const);
    for (const [sig, h] of handlers) process.on(sig, h);
    try {
      await withInspector(io, !!values.inspect, port, (insp) =>
        runDemo({ ...(insp ? { inspect: insp.inspect } : {}), ...(values.record ? { record: values.record } : {}), ...viewer }),
      );
    } finally {
      for (const [sig, h] of handlers) process.off(sig, h);
    }
    return stoppedBy ? signalExitCode(stoppedBy) : 0;
  },
);
