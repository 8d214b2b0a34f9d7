/**
 * Nomad's template hook, for what berth serves today: each `template` block of a task rendered
 * with Go's text/template and consul-template's functions (`env`, `file`, strings, JSON, ...) into
 * the task dir before the task starts, with its `perms`; `env = true` turns the result's
 * `KEY=value` lines into the task's environment. A render that fails (a refused data source, a
 * missing key with `error_on_missing_key`, a parse error) fails the start with "Template failed",
 * which no restart mends. No data source berth serves changes, so nothing re-renders yet.
 * @module
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { BerthError, DriverStartError } from '../../model/errors.ts';
import { errorText } from '../../model/error-text.ts';
import type { Task, TaskTemplate } from '../../model/types.ts';
import type { TaskConfig } from '../drivers/driver.ts';
import { consulTemplateFuncs } from '../templates/consul-funcs.ts';
import { render } from '../templates/index.ts';

/** A template that cannot be rendered (the start reports it as "Template failed: ..."). */
export class TemplateRenderError extends BerthError {}

/** Go's go-envparse, as Nomad reads an env template: `KEY=value` lines, `#` comments, `export `, quotes. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const body = line.startsWith('export ') ? line.slice(7).trim() : line;
    const eq = body.indexOf('=');
    if (eq <= 0) throw new TemplateRenderError(`env template: line ${JSON.stringify(raw)} is not KEY=value`);
    const key = body.slice(0, eq).trim();
    let value = body.slice(eq + 1).trim();
    if (value.length >= 2 && ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'")))) {
      const quote = value[0];
      value = value.slice(1, -1);
      if (quote === '"') value = value.replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
    }
    out[key] = value;
  }
  return out;
}

const within = (root: string, p: string) => p === root || p.startsWith(root + sep);

async function renderOne(t: TaskTemplate, config: TaskConfig): Promise<{ env?: Record<string, string> }> {
  if ((t.leftDelimiter && t.leftDelimiter !== '{{') || (t.rightDelimiter && t.rightDelimiter !== '}}'))
    throw new TemplateRenderError('left_delimiter and right_delimiter other than {{ and }} are not supported by berth yet');
  const taskDir = config.taskDir.dir;
  let text = t.data;
  if (text === undefined || text === '') {
    if (!t.source) throw new TemplateRenderError(`template for ${t.destination} has neither data nor source`);
    const src = resolve(taskDir, t.source);
    if (!within(config.allocDir.dir, src)) throw new TemplateRenderError(`source ${t.source} is outside the alloc dir`);
    text = await readFile(src, 'utf8');
  }
  const dest = resolve(taskDir, t.destination);
  if (!within(config.allocDir.dir, dest)) throw new TemplateRenderError(`destination ${t.destination} escapes the alloc dir`);
  const out = render(text, null, {
    name: t.destination,
    funcs: consulTemplateFuncs({ env: config.env, taskDir }),
    missingKey: t.errorOnMissingKey ? 'error' : 'default',
  });
  await mkdir(dirname(dest), { recursive: true });
  await writeFile(dest, out, { mode: t.perms ? parseInt(t.perms, 8) : 0o644 });
  return t.env ? { env: parseEnvFile(out) } : {};
}

/** Renders the task's templates in order; returns the variables of its `env = true` ones. */
export async function renderTaskTemplates(task: Task, config: TaskConfig): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const t of task.templates ?? []) {
    try {
      Object.assign(env, (await renderOne(t, { ...config, env: { ...config.env, ...env } })).env);
    } catch (e) {
      throw new DriverStartError(`Template failed: ${errorText(e)}`, false);
    }
  }
  return env;
}
