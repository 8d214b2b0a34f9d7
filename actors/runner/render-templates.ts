/**
 * One `template` block rendered, as Nomad's template hook does it: Go's text/template with
 * consul-template's functions (`env`, `file`, strings, JSON, ... and the Nomad data functions
 * over the manager's cache), the block's delimiters and missing-key rule, the client's function
 * denylist and file sandbox; the result written atomically into the task dir with its `perms`
 * (and `uid`/`gid`). `env = true` turns the result's `KEY=value` lines into the task's
 * environment (Nomad's env-file rules). Consul's and Vault's functions are refused by name.
 * @module
 */
import { chmod, chown, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { interpolateEnv } from '../drivers/env.ts';
import { BerthError } from '../../model/errors.ts';
import type { TaskTemplate } from '../../model/types.ts';
import { consulTemplateFuncs } from '../templates/consul-funcs.ts';
import { nomadFuncs, type DepReader } from '../templates/nomad-funcs.ts';
import { TemplateFuncError } from '../templates/errors.ts';
import type { FuncMap } from '../templates/funcs.ts';
import { Template } from '../templates/index.ts';

/** A template that cannot be rendered (the task reports it as "Template failed: ..."). */
export class TemplateRenderError extends BerthError {}

/** Where a render reads and writes: the task's dirs and environment. */
export interface RenderContext {
  env: Record<string, string>;
  taskDir: { dir: string };
  allocDir: { dir: string };
}

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

/**
 * A template path as Nomad reads it: `${NOMAD_TASK_DIR}` and the other task variables
 * interpolated; an absolute result inside the alloc dir (a host path, as raw_exec's variables
 * are) is taken as it is, anything else is joined under the task dir (so `/local/x`, an exec
 * task's view, is the task's `local/x`).
 */
export function templatePath(p: string, ctx: RenderContext): string {
  const interpolated = interpolateEnv(p, ctx.env);
  if (isAbsolute(interpolated) && within(ctx.allocDir.dir, resolve(interpolated))) return resolve(interpolated);
  return join(ctx.taskDir.dir, interpolated);
}

/** Where a template's result goes; one that leaves the alloc dir is refused (Nomad's escape rule). */
function destinationOf(t: TaskTemplate, ctx: RenderContext): string {
  const dest = templatePath(t.destination, ctx);
  if (!within(ctx.allocDir.dir, dest)) throw new TemplateRenderError(`destination ${t.destination} escapes the alloc dir`);
  return dest;
}

/** Renders one template's text over `reader` (the Nomad functions' data); never waits. */
export async function renderTemplate(
  t: TaskTemplate,
  ctx: RenderContext,
  reader: DepReader,
  opts: { who: { namespace: string }; denylist: readonly string[]; noSandbox: boolean },
): Promise<string> {
  let text = t.data;
  if (text === undefined || text === '') {
    if (!t.source) throw new TemplateRenderError(`template for ${t.destination} has neither data nor source`);
    const src = templatePath(t.source, ctx);
    if (!opts.noSandbox && !within(ctx.allocDir.dir, src)) throw new TemplateRenderError(`source ${t.source} is outside the alloc dir`);
    text = await readFile(src, 'utf8');
  }
  const funcs: FuncMap = {
    ...consulTemplateFuncs({ env: ctx.env, taskDir: opts.noSandbox ? '/' : ctx.taskDir.dir }),
    ...nomadFuncs(reader, opts.who.namespace),
  };
  // consul-template's denylist: a denied function is still known (the template parses) but fails when called.
  for (const name of opts.denylist)
    funcs[name] = () => {
      throw new TemplateFuncError(`function ${JSON.stringify(name)} is disabled`);
    };
  // consul-template's executeTemplate: a `define`d template of this one, with its own dot.
  const self: { tmpl?: Template } = {};
  funcs.executeTemplate ??= (name: unknown, ...data: unknown[]) => self.tmpl!.executeTemplate(String(name), data[0] ?? null);
  const tmpl = (self.tmpl = new Template(t.destination, {
    funcs,
    missingKey: t.errorOnMissingKey ? 'error' : 'default',
    ...(t.leftDelimiter || t.rightDelimiter ? { delims: [t.leftDelimiter ?? '', t.rightDelimiter ?? ''] as const } : {}),
  }).parse(text));
  return tmpl.execute(null);
}

/** Whether the template's destination file exists (a task may have removed it). */
export async function renderedExists(t: TaskTemplate, ctx: RenderContext): Promise<boolean> {
  return stat(destinationOf(t, ctx)).then(
    () => true,
    () => false,
  );
}

/** Writes a result atomically (a temporary file renamed over the destination), with its perms and owner. */
export async function writeRendered(t: TaskTemplate, ctx: RenderContext, out: string): Promise<void> {
  const dest = destinationOf(t, ctx);
  await mkdir(dirname(dest), { recursive: true });
  const tmp = `${dest}.berth-tmp-${process.pid}`;
  const mode = t.perms ? parseInt(t.perms, 8) : 0o644;
  await writeFile(tmp, out);
  await chmod(tmp, mode); // exactly the perms asked for, whatever the umask
  if ((t.uid !== undefined && t.uid >= 0) || (t.gid !== undefined && t.gid >= 0)) await chown(tmp, t.uid ?? -1, t.gid ?? -1);
  await rename(tmp, dest);
}
