/**
 * Nomad's port range syntax (`client { reserved { reserved_ports = "22,80,8000-8100" } }`): a
 * comma-separated list of ports and `low-high` ranges, spaces around each part allowed. Pure.
 * @module
 */
import { BerthError } from '../../index.ts';

/** A port range text is not Nomad's syntax; the message says what is wrong, in Nomad's words. */
export class PortRangeError extends BerthError {}

/** Ports above this are refused (Nomad's `MaxValidPort`). */
export const MAX_VALID_PORT = 65536;

function port(text: string): number {
  if (!/^\d+$/.test(text)) throw new PortRangeError(`strconv.ParseUint: parsing ${JSON.stringify(text)}: invalid syntax`);
  const n = Number(text);
  if (n === 0) throw new PortRangeError('port must be > 0');
  if (n > MAX_VALID_PORT) throw new PortRangeError(`port must be < ${MAX_VALID_PORT} but found ${n}`);
  return n;
}

/**
 * The ports `spec` names, in order, without duplicates: `parsePortRanges("10,12-14")` is
 * `[10, 12, 13, 14]`; `""` is `[]`.
 * @throws {PortRangeError} for an empty part, a non-number, 0, a port past 65536 or a range
 *   whose end is below its start.
 */
export function parsePortRanges(spec: string): number[] {
  if (spec === '') return [];
  const out = new Set<number>();
  for (const raw of spec.split(',')) {
    const part = raw.trim();
    const ends = part.split('-');
    if (ends.length === 1) {
      if (part === '') throw new PortRangeError("can't specify empty port");
      out.add(port(part));
      continue;
    }
    if (ends.length !== 2) throw new PortRangeError(`can only parse single port numbers or port ranges (ex. 80,100-120,150), got ${JSON.stringify(part)}`);
    const start = port(ends[0]!.trim());
    const end = port(ends[1]!.trim());
    if (end < start) throw new PortRangeError(`invalid range: ending value (${end}) less than starting (${start}) value`);
    for (let p = start; p <= end; p++) out.add(p);
  }
  return [...out];
}
