/**
 * Signal names and numbers, as Nomad's `kill_signal` and `nomad alloc signal` write them.
 * Accepts `"SIGINT"`, `"INT"`, `"sigint"` or a number; numbers are the Linux ones from `os.constants`.
 * @module
 */
import { constants } from 'node:os';
import { DriverConfigError } from '../../model/errors.ts';

const BY_NAME = constants.signals as Record<string, number>;
const BY_NUMBER = new Map<number, NodeJS.Signals>();
for (const [name, num] of Object.entries(BY_NAME)) {
  // SIGIOT/SIGABRT, SIGPOLL/SIGIO, SIGUNUSED/SIGSYS share numbers: keep the first, canonical name.
  if (!BY_NUMBER.has(num)) BY_NUMBER.set(num, name as NodeJS.Signals);
}

/** The canonical `SIG...` name for a name, short name or number; throws DriverConfigError if unknown. */
export function signalName(sig: string | number): NodeJS.Signals {
  if (typeof sig === 'number') {
    const name = BY_NUMBER.get(sig);
    if (!name) throw new DriverConfigError(`unknown signal ${sig}`);
    return name;
  }
  const text = sig.trim().toUpperCase();
  if (/^\d+$/.test(text)) return signalName(Number(text));
  const name = text.startsWith('SIG') ? text : `SIG${text}`;
  if (!(name in BY_NAME)) throw new DriverConfigError(`unknown signal ${JSON.stringify(sig)}`);
  return name as NodeJS.Signals;
}

/** The signal number for a name, short name or number; throws DriverConfigError if unknown. */
export function signalNumber(sig: string | number): number {
  return BY_NAME[signalName(sig)]!;
}

/** True when `sig` names a signal this platform knows. */
export function isSignal(sig: string | number): boolean {
  try {
    signalName(sig);
    return true;
  } catch {
    return false;
  }
}
