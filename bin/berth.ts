#!/usr/bin/env node
/**
 * The `berth` command. `berth --help` lists the subcommands; each lives in `cli/commands/`.
 * @module
 */
import { main } from './cli/main.ts';
import { processIO } from './cli/io.ts';

const code = await main(process.argv.slice(2), processIO());
// Exit now: an inspector socket or a stdin reader must not keep a finished command alive.
process.exit(code);
