/**
 * `--inspect [--port N]`: serves the Stately inspector relay on localhost and connects berth's
 * inspection observer to it for the duration of a command.
 * @module
 */
import { createInspectorServer } from '@statelyai/inspect/server';
import { connectInspector, type WsInspector } from '../../actors/inspect/ws-inspector.ts';
import { UsageError } from './errors.ts';
import { writeLine, type CliIO } from './io.ts';

/** Parses a port flag (`--port` by default): an integer from 1 to 65535. */
export function parsePort(command: string, value: string | undefined, fallback = 8080, flag = 'port'): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 65535) throw new UsageError(`--${flag} must be a port number (1-65535), got ${JSON.stringify(value)}`, command);
  return n;
}

/** Runs `fn` with an inspector observer when `enabled`, and tears the relay down after. */
export async function withInspector<T>(io: CliIO, enabled: boolean, port: number, fn: (insp?: WsInspector) => Promise<T>): Promise<T> {
  if (!enabled) return fn();
  const server = createInspectorServer({ port, autoOpen: false });
  writeLine(io.stderr, `inspector: open http://localhost:${port} in a browser (it loads the Stately inspector)`);
  const insp = connectInspector({ url: `ws://127.0.0.1:${port}` });
  try {
    return await fn(insp);
  } finally {
    await insp.stop();
    server.stop();
  }
}
