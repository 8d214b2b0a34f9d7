/**
 * `npm start`: the seed's #10200 repro in one command. Starts `berth agent -dev -config
 * agent.hcl` in this process on a free port, then runs `berth job run lo.nomad.hcl` and `berth
 * job run hi.nomad.hcl` against it, exactly as a user types them: two `lo` allocs are evicted,
 * `hi`'s runner waits for each with its own watcher, and `hi` runs once both stopped.
 */
import { fileURLToPath } from 'node:url';
import { startAgent } from '../agent/agent.ts';
import { loadAgentConfigFile, resolveAgentConfig } from '../agent/config/config.ts';
import { main } from './cli/main.ts';
import { processIO } from './cli/io.ts';

const here = (f: string) => fileURLToPath(new URL(`../examples/seed-10200/${f}`, import.meta.url));
const started = Date.now();
const config = resolveAgentConfig([await loadAgentConfigFile(here('agent.hcl'))], { dev: true, port: 0 });
const agent = await startAgent(config, { log: (line) => process.stderr.write(`    [agent] ${line}\n`) });
process.env.BERTH_ADDR = agent.url;
const io = processIO();
let code = 0;
try {
  for (const job of ['lo.nomad.hcl', 'hi.nomad.hcl']) {
    process.stdout.write(`\n$ berth job run examples/seed-10200/${job}\n`);
    code = await main(['job', 'run', here(job)], io);
    if (code !== 0) break;
  }
  process.stdout.write('\n$ berth job status lo\n');
  await main(['job', 'status', 'lo'], io);
} finally {
  await agent.close();
}
process.stdout.write(`\ndone in ${((Date.now() - started) / 1000).toFixed(1)} s (the agent destroyed its allocs on the way out, as nomad agent -dev does)\n`);
process.exit(code);
