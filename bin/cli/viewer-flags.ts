/**
 * The viewer flags `run` and `demo` share (berth's own page, no internet needed), and `view`'s:
 * `--view`, `--record FILE`, `--view-host H`, `--view-port N`, `--token T`.
 * @module
 */
import type { ViewerServeOptions } from '../../actors/viewer/server.ts';
import { parsePort } from './inspector.ts';

/** parseArgs options of the viewer flags. */
export const VIEWER_FLAGS = {
  view: { type: 'boolean' },
  record: { type: 'string' },
  'view-host': { type: 'string' },
  'view-port': { type: 'string' },
  token: { type: 'string' },
} as const;

/** Help lines for the viewer flags. */
export const VIEWER_HELP = `  --view          serve berth's live viewer (works offline) on --view-host/--view-port
  --record FILE   record every inspection event to FILE (JSON lines) for berth view
  --view-host H   default 127.0.0.1
  --view-port N   default 8081
  --token T       the viewer then needs ?token=T`;

/** The viewer server's options from parsed flags, with `log` for where it is. */
export function viewerOptions(
  command: string,
  values: { 'view-host'?: string | boolean; 'view-port'?: string | boolean; token?: string | boolean },
  log: (line: string) => void,
): ViewerServeOptions & { log: (line: string) => void } {
  const host = typeof values['view-host'] === 'string' ? values['view-host'] : '127.0.0.1';
  const port = parsePort(command, typeof values['view-port'] === 'string' ? values['view-port'] : undefined, 8081, 'view-port');
  return { host, port, ...(typeof values.token === 'string' ? { token: values.token } : {}), log };
}
