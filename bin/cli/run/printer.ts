/**
 * What `berth run` shows: the event timeline (allocation state changes, task events, watcher and
 * migration decisions) and each task's output lines with a task prefix, as `docker compose up`
 * does. Three modes: text (default), `--quiet` (the tasks' output only) and `--json` (one JSON
 * object per line, events and output alike).
 * @module
 */
import { formatUsageLine } from '../../../actors/cgroups/format-usage.ts';
import type { BusMessage } from '../../../bus/messages.ts';
import { paint, writeLine, type CliIO } from '../io.ts';
import { CHROOT_PROGRESS_EVERY_MS, chrootCounts, chrootFraction, chrootProgressLine } from './chroot-progress.ts';

/** How `run` prints. */
export type PrintMode = 'text' | 'quiet' | 'json';

/** Bus messages shown on the timeline. */
export const TIMELINE_TYPES = [
  'alloc.state',
  'task.event',
  'hook.error',
  'watcher.waiting',
  'watcher.released',
  'watcher.retry',
  'migration.started',
  'migration.skipped',
  'migration.done',
  'migration.failed',
  'client.error',
  'task.stats',
  'chroot.progress',
] as const;

/** Prints `run`'s output in one of the three modes. */
export class RunPrinter {
  readonly #io: CliIO;
  readonly #mode: PrintMode;
  readonly #c: (code: number, text: string) => string;
  readonly #width: number;
  readonly #tty: boolean;
  /** A progress line is on screen (TTY): the next line replaces it. */
  #bar = false;
  /** When each task's chroot progress was last printed (not a TTY). */
  readonly #lastProgress = new Map<string, number>();

  constructor(io: CliIO, mode: PrintMode, taskNames: string[]) {
    this.#io = io;
    this.#mode = mode;
    this.#c = paint(io.color);
    this.#width = Math.max(...taskNames.map((n) => n.length));
    this.#tty = !!(io.stdout as { isTTY?: boolean }).isTTY;
  }

  /** One bus message on the timeline. */
  event(m: BusMessage): void {
    if (this.#mode === 'quiet') return;
    if (this.#mode === 'json') return this.#json({ ...m });
    if (m.type === 'chroot.progress') return this.#progress(m);
    this.#clearBar();
    const time = this.#c(90, new Date(m.time).toISOString().slice(11, 23));
    writeLine(this.#io.stdout, `${time} ${describe(m, this.#c)}`);
  }

  /**
   * A chroot build's progress: on a terminal one line redrawn in place, with a bar once the total
   * is known; otherwise a line every couple of seconds.
   */
  #progress(m: BusMessage<'chroot.progress'>): void {
    const counts = chrootCounts(m);
    const frac = chrootFraction(m);
    if (this.#tty) {
      const width = 24;
      const bar = frac === undefined ? '' : `[${'#'.repeat(Math.round(frac * width)).padEnd(width, '-')}] ${String(Math.floor(frac * 100)).padStart(3)} % `;
      this.#io.stdout.write(`\r\x1b[2K${m.task}: building chroot ${bar}${counts}`);
      this.#bar = true;
      return;
    }
    const last = this.#lastProgress.get(m.task);
    if (last !== undefined && m.time - last < CHROOT_PROGRESS_EVERY_MS) return;
    this.#lastProgress.set(m.task, m.time);
    const time = this.#c(90, new Date(m.time).toISOString().slice(11, 23));
    writeLine(this.#io.stdout, `${time} ${m.task}: ${chrootProgressLine(m)}`);
  }

  /** Ends a progress line on screen, so what follows starts on a line of its own. */
  #clearBar(): void {
    if (!this.#bar) return;
    this.#bar = false;
    this.#io.stdout.write('\r\x1b[2K');
  }

  /** One line of a task's output. */
  output(task: string, stream: 'stdout' | 'stderr', line: string): void {
    if (this.#mode === 'json') return this.#json({ type: 'log', time: Date.now(), task, stream, line });
    this.#clearBar();
    const prefix = this.#c(stream === 'stderr' ? 31 : 36, `${task.padEnd(this.#width)} |`);
    writeLine(stream === 'stderr' ? this.#io.stderr : this.#io.stdout, `${prefix} ${line}`);
  }

  /** A note from the command itself (signals, where data was kept); on stderr in text mode. */
  note(text: string, fields: Record<string, unknown> = {}): void {
    if (this.#mode === 'json') return this.#json({ type: 'note', time: Date.now(), message: text, ...fields });
    this.#clearBar();
    writeLine(this.#io.stderr, `berth: ${text}`);
  }

  /** The final line: the allocation's client status and the exit code. */
  result(fields: { allocId: string; clientStatus: string; exitCode: number; signal?: string; dataDir?: string }): void {
    if (this.#mode === 'json') return this.#json({ type: 'result', time: Date.now(), ...fields });
    if (this.#mode === 'quiet') return;
    this.#clearBar();
    const how = fields.signal ? `, stopped by ${fields.signal}` : '';
    writeLine(this.#io.stdout, `allocation ${fields.allocId}: ${this.#c(1, fields.clientStatus)}${how} (exit ${fields.exitCode})`);
  }

  #json(obj: Record<string, unknown>): void {
    writeLine(this.#io.stdout, JSON.stringify(obj));
  }
}

/** One timeline line for a bus message (without the time). */
function describe(m: BusMessage, c: (code: number, text: string) => string): string {
  const id = (s: string) => s.slice(0, 8);
  switch (m.type) {
    case 'alloc.state':
      return `alloc ${id(m.allocId)} ${m.from ?? '∅'} → ${c(1, m.to)}`;
    case 'task.event':
      return `${m.task}: ${c(33, m.event.type)} — ${m.event.displayMessage}`;
    case 'hook.error':
      return `${c(31, `hook ${m.hook} (${m.kind}) failed`)}: ${m.error}`;
    case 'watcher.waiting':
      return `waits for ${m.role} alloc ${id(m.watchedAllocId)} (${m.mode} watcher)`;
    case 'watcher.released':
      return `released by ${id(m.watchedAllocId)}: ${m.reason}`;
    case 'watcher.retry':
      return `retry ${id(m.watchedAllocId)} in ${m.delayMs} ms: ${m.error}`;
    case 'migration.started':
      return `migrating data from ${id(m.previousAllocId)} (${m.mode})`;
    case 'migration.skipped':
      return `migration skipped: ${m.reason}`;
    case 'migration.done':
      return `migrated data from ${id(m.previousAllocId)} in ${m.ms} ms`;
    case 'migration.failed':
      return `${c(31, 'migration failed')}: ${m.error}`;
    case 'client.error':
      return `${c(31, 'error')}: ${m.error}`;
    case 'task.stats':
      return formatUsageLine(m.task, m.usage);
    default:
      return m.type;
  }
}
