/**
 * A request body's nesting bounded before `JSON.parse` sees it: a 4 MiB body of `[[[[…` kept the
 * event loop for seconds (the parse, then every walk after it). Go's `encoding/json`, which
 * decodes Nomad's bodies, stops at 10,000 levels to protect its stack; berth's bound is a policy
 * instead, far above any real job (a job's deepest path, a driver `config` map inside a task
 * inside a group, is about a dozen levels; the library refuses allocations deeper than 64, and
 * the job sits three levels down in one) and low enough that nothing after the parse can be slow
 * on depth.
 * @module
 */
import { ApiError } from './errors.ts';

/** Deepest nesting of arrays and objects a request body may have (the outermost is level 1). */
export const MAX_JSON_DEPTH = 256;

const OPEN_OBJ = 0x7b; // {
const OPEN_ARR = 0x5b; // [
const CLOSE_OBJ = 0x7d; // }
const CLOSE_ARR = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Throws an ApiError 400 naming the bound when `text` nests deeper than `max`. One linear pass,
 * stopping at the first level too deep; brackets inside strings do not count. It does not
 * validate: malformed text is left to `JSON.parse`.
 */
export function checkJsonDepth(text: string, max: number = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJ || c === OPEN_ARR) {
      if (++depth > max) throw new ApiError(400, `failed to parse request body: nested deeper than ${max} levels (the agent's limit)`);
    } else if (c === CLOSE_OBJ || c === CLOSE_ARR) depth--;
  }
}
