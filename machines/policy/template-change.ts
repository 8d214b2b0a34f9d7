/**
 * What a template re-render does to its task, as Nomad's template manager decides it: any
 * changed template with `change_mode = "restart"` restarts the task (and nothing else happens);
 * otherwise each distinct `change_signal` is sent once and each `change_script` runs; `noop`
 * templates only rewrite their file. Also the events that say so, in Nomad's words.
 * @module
 */
import { taskEvent } from './task-events.ts';
import type { TaskEvent, TemplateChangeScript } from '../../model/types.ts';

/** One changed template's change settings, as the template manager reports it. */
export interface TemplateChange {
  changeMode: 'restart' | 'signal' | 'script' | 'noop';
  changeSignal?: string;
  changeScript?: TemplateChangeScript;
}

/** What the task chart does about a set of changed templates. */
export interface TemplateActions {
  restart: boolean;
  signals: string[];
  scripts: TemplateChangeScript[];
}

/** The "Restart Signaled" reason of a restart a template caused. */
export const TEMPLATE_RESTART_REASON = 'Template with change_mode restart re-rendered';

/** The display message of a "Signaling" a template caused. */
export const TEMPLATE_SIGNAL_MESSAGE = 'Template re-rendered';

/** Nomad's rule (see the module doc). */
export function templateActions(changes: readonly TemplateChange[]): TemplateActions {
  if (changes.some((c) => c.changeMode === 'restart')) return { restart: true, signals: [], scripts: [] };
  const signals = [...new Set(changes.filter((c) => c.changeMode === 'signal' && c.changeSignal).map((c) => c.changeSignal!))];
  const scripts = changes.filter((c) => c.changeMode === 'script' && c.changeScript).map((c) => c.changeScript!);
  return { restart: false, signals, scripts };
}

/** What a change script's run came to (the `templateScript` effect's output). */
export interface TemplateScriptOutput {
  script: TemplateChangeScript;
  exitCode: number;
  /** Why it failed to run or was cut short (a timeout), when it did. */
  error?: string;
  time: number;
}

/** What the `templateEffects` effect did: each script's run, in order. */
export interface TemplateEffectsOutput {
  scripts: TemplateScriptOutput[];
}

/** A script failed: a non-zero exit, or an error running it. */
export const scriptFailed = (out: TemplateScriptOutput): boolean => out.error !== undefined || out.exitCode !== 0;

/** Nomad's event for a change script's run; a failure with `fail_on_error` fails the task. */
export function templateScriptEvent(out: TemplateScriptOutput): TaskEvent {
  const { command, args = [] } = out.script;
  if (!scriptFailed(out))
    return taskEvent('Task hook message', out.time, {
      displayMessage: `Template successfully ran script ${command} with arguments: [${args.join(' ')}]. Exit code: ${out.exitCode}`,
    });
  const why = out.error ?? `exit status ${out.exitCode}`;
  return taskEvent(out.script.failOnError ? 'Killing' : 'Task hook failed', out.time, {
    displayMessage: `Template failed to run script ${command} with arguments [${args.join(' ')}] on change: ${why} Exit code: ${out.exitCode}`,
    details: out.script.failOnError ? { fails_task: 'true' } : {},
  });
}

/** The event of a re-render that failed: the task is killed and fails (Nomad's "Template failed"). */
export function templateFailedEvent(error: string, time: number): TaskEvent {
  return taskEvent('Killing', time, { displayMessage: `Template failed: ${error}`, details: { fails_task: 'true' } });
}
