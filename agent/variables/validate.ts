/**
 * Nomad's rules for a variable write, each refusal an {@link InvalidVariableError} naming its
 * field: the path (`^[a-zA-Z0-9-_~/]{1,128}$`, no leading, trailing or doubled `/`, and under
 * `nomad/` only `nomad/jobs[/...]` and `nomad/job-templates/<name>`), the namespace (Nomad's
 * namespace names, never the wildcard), the items (at least one, at most 64 KiB of keys and values).
 * @module
 */
import { InvalidVariableError } from './errors.ts';

/** Nomad's `maxVariableSize`: the bytes of every key and value together. */
export const MAX_VARIABLE_BYTES = 64 * 1024;

/** Nomad's `validVariablePath`. */
const PATH = /^[a-zA-Z0-9\-_~/]{1,128}$/;
/** Nomad's `validNamespaceName`. */
const NAMESPACE = /^[a-zA-Z0-9-]{1,128}$/;

/** Refuses a path Nomad would refuse (or that an HTTP path cannot carry cleanly). */
export function checkPath(path: string): void {
  if (path === '') throw new InvalidVariableError('Path', 'variable requires path');
  if (!PATH.test(path)) throw new InvalidVariableError('Path', `invalid path ${JSON.stringify(path)}: at most 128 of a-z A-Z 0-9 - _ ~ /`);
  if (path.startsWith('/') || path.endsWith('/')) throw new InvalidVariableError('Path', `invalid path ${JSON.stringify(path)}: no leading or trailing "/"`);
  if (path.includes('//')) throw new InvalidVariableError('Path', `invalid path ${JSON.stringify(path)}: empty segment ("//")`);
  const parts = path.split('/');
  if (parts[0] !== 'nomad') return;
  if (parts.length === 1)
    throw new InvalidVariableError(
      'Path',
      '"nomad" is a reserved top-level directory path, but you may write variables to "nomad/jobs", "nomad/job-templates", or below',
    );
  if (parts[1] === 'jobs') return;
  if (parts[1] === 'job-templates' && parts.length === 3) return;
  if (parts[1] === 'job-templates')
    throw new InvalidVariableError(
      'Path',
      '"nomad/job-templates" is a reserved directory path, but you may write variables at the level below it, for example, "nomad/job-templates/template-name"',
    );
  throw new InvalidVariableError('Path', 'only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory');
}

/** Refuses a namespace name Nomad would refuse; `wildcard` lets `*` through (a list of every namespace). */
export function checkNamespace(namespace: string, wildcard = false): void {
  if (namespace === '*') {
    if (wildcard) return;
    throw new InvalidVariableError('Namespace', 'can not target wildcard ("*") namespace');
  }
  if (!NAMESPACE.test(namespace)) throw new InvalidVariableError('Namespace', `invalid namespace ${JSON.stringify(namespace)}: at most 128 of a-z A-Z 0-9 -`);
}

/** The bytes Nomad counts for a variable's size: every key and value, UTF-8. */
export function itemsSize(items: Record<string, string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(items)) n += Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}

/** Refuses empty items and items over {@link MAX_VARIABLE_BYTES}. */
export function checkItems(items: Record<string, string> | undefined | null): asserts items is Record<string, string> {
  if (!items || Object.keys(items).length === 0) throw new InvalidVariableError('Items', 'variable missing required Items object');
  if (itemsSize(items) > MAX_VARIABLE_BYTES) throw new InvalidVariableError('Items', 'variables are limited to 64KiB in total size');
}
