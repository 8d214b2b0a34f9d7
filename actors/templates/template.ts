/**
 * `Template`: Go's `text/template.Template` — a named template, its associated templates
 * (`define`/`block`/`New`), its functions and options.
 * @module
 */
import { BerthError } from '../../model/errors.ts';
import { execute, type ExecTemplate, type MissingKey } from './exec.ts';
import { BUILTINS, userFunc, type FuncMap, type FuncSpec } from './funcs.ts';
import { isEmptyTree } from './nodes.ts';
import { parseTrees, type Tree } from './parse.ts';

/** Options of a template set. */
export interface TemplateOptions {
  /** Extra functions (Go's `Funcs`). */
  funcs?: FuncMap;
  /** Go's `Option("missingkey=...")`: `default` (or `invalid`) prints `<no value>`, `zero`, `error`. */
  missingKey?: MissingKey | 'invalid';
  /** Go's `Delims(left, right)`; an empty one is the default `{{` or `}}`. */
  delims?: readonly [string, string];
}

interface Common {
  tmpl: Map<string, Template>;
  funcs: Map<string, FuncSpec>;
  missingKey: MissingKey;
  delims?: readonly [string, string];
}

/** A template and its associated set, as Go's `text/template.Template`. */
export class Template implements ExecTemplate {
  /** The parse tree, null until parsed. */
  tree: Tree | null = null;
  private readonly common: Common;

  /** Go's `template.New(name)`. */
  constructor(
    /** The template's name. */
    readonly name: string,
    options: TemplateOptions = {},
    common?: Common,
  ) {
    this.common = common ?? { tmpl: new Map(), funcs: new Map(), missingKey: 'default' };
    if (options.funcs) this.funcs(options.funcs);
    if (options.missingKey) this.common.missingKey = options.missingKey === 'invalid' ? 'default' : options.missingKey;
    if (options.delims) this.common.delims = options.delims;
  }

  /** The missingkey option in force. */
  get missingKey(): MissingKey {
    return this.common.missingKey;
  }

  /** Go's `t.New(name)`: a new template associated with this one. */
  new(name: string): Template {
    return new Template(name, {}, this.common);
  }

  /** Go's `Funcs`: adds functions to the set (before parsing). */
  funcs(map: FuncMap): this {
    for (const [name, f] of Object.entries(map)) {
      if (!/^[\p{L}_][\p{L}\p{Nd}_]*$/u.test(name)) throw new BerthError(`function name ${JSON.stringify(name)} is not a valid identifier`);
      this.common.funcs.set(name, userFunc(f));
    }
    return this;
  }

  /** Go's `Option`: `missingkey=default|invalid|zero|error`. */
  option(...opts: string[]): this {
    for (const opt of opts) {
      const m = /^missingkey=(default|invalid|zero|error)$/.exec(opt);
      if (!m) throw new BerthError(`unrecognized option: ${opt}`);
      this.common.missingKey = m[1] === 'invalid' ? 'default' : (m[1] as MissingKey);
    }
    return this;
  }

  /** Go's `Parse`: parses `text` as this template's body; `define`d templates join the set. Throws TemplateParseError. */
  parse(text: string): this {
    const trees = parseTrees(this.name, text, (n) => this.common.funcs.has(n) || BUILTINS.has(n), this.common.delims);
    for (const [name, tree] of trees) {
      const t = name === this.name ? this : (this.common.tmpl.get(name) ?? this.new(name));
      const old = this.common.tmpl.get(name);
      if (old && isEmptyTree(tree.root) && old.tree) continue;
      t.tree = tree;
      this.common.tmpl.set(name, t);
    }
    return this;
  }

  /** Go's `Lookup`. */
  lookup(name: string): Template | undefined {
    return this.common.tmpl.get(name);
  }

  /** A user function by name (for the executor). */
  func(name: string): FuncSpec | undefined {
    return this.common.funcs.get(name);
  }

  /** Go's `Execute`: renders with `data` as dot. Throws TemplateExecError. */
  execute(data: unknown): string {
    return execute(this, data);
  }

  /** Go's `ExecuteTemplate`. */
  executeTemplate(name: string, data: unknown): string {
    const t = this.lookup(name);
    if (!t) throw new BerthError(`template: no template ${JSON.stringify(name)} associated with template ${JSON.stringify(this.name)}`);
    return t.execute(data);
  }
}

/** Parses and executes `text` as the template `name` in one call. */
export function render(text: string, data: unknown, options: TemplateOptions & { name?: string } = {}): string {
  return new Template(options.name ?? 'template', options).parse(text).execute(data);
}
