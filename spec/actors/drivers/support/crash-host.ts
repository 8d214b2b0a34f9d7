/**
 * A stand-in host process for the crash-survival spec: starts one raw_exec task that logs every
 * ~50 ms, prints its handle as one JSON line, then idles until it is killed (kill -9).
 * Usage: node --import tsx crash-host.ts <configJson>
 */
import { createRawExecDriver } from '../../../../actors/drivers/raw-exec.ts';
import type { TaskConfig } from '../../../../actors/drivers/driver.ts';

const config = JSON.parse(process.argv[2]!) as TaskConfig;
const driver = createRawExecDriver();
const handle = await driver.start(config, new AbortController().signal);
process.stdout.write(JSON.stringify(handle) + '\n');
setInterval(() => {}, 60_000);
