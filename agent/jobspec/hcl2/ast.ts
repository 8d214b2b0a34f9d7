/**
 * The syntax tree of HCL2 expressions and templates (hclsyntax's spec), with each node's start
 * and end offsets in the expression text.
 * @module
 */
import type { Value } from './values.ts';

/** Offsets of a node in the text it was parsed from. */
export interface Span {
  start: number;
  end: number;
}

/** A binary operator, by HCL's spelling. */
export type BinaryOp = '||' | '&&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%';

/** A piece of a template: literal text, an interpolation, or a directive. */
export type TemplatePart =
  | { kind: 'text'; text: string }
  | { kind: 'interp'; expr: Expr }
  | { kind: 'if'; cond: Expr; then: TemplatePart[]; else: TemplatePart[] }
  | { kind: 'for'; keyVar?: string; valueVar: string; collection: Expr; body: TemplatePart[] };

/** One HCL2 expression. */
export type Expr = Span &
  (
    | { kind: 'literal'; value: Value }
    | { kind: 'template'; parts: TemplatePart[] }
    | { kind: 'variable'; name: string }
    /** A traversal from a root variable: kept as written when the root is not known (a runtime reference). */
    | { kind: 'reference'; root: string; expr: Expr }
    | { kind: 'attr'; object: Expr; name: string }
    | { kind: 'index'; object: Expr; key: Expr }
    /** `source[*]` / `source.*`: `each` is applied to every element, with `splatItem` standing for it. */
    | { kind: 'splat'; source: Expr; each: Expr }
    | { kind: 'splatItem' }
    | { kind: 'call'; name: string; args: Expr[]; expand: boolean }
    | { kind: 'unary'; op: '!' | '-'; operand: Expr }
    | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
    | { kind: 'conditional'; cond: Expr; then: Expr; else: Expr }
    | { kind: 'tuple'; items: Expr[] }
    | { kind: 'object'; items: Array<{ key: Expr; value: Expr }> }
    | { kind: 'paren'; expr: Expr }
    | { kind: 'forTuple'; keyVar?: string; valueVar: string; collection: Expr; value: Expr; cond?: Expr }
    | { kind: 'forObject'; keyVar?: string; valueVar: string; collection: Expr; key: Expr; value: Expr; group: boolean; cond?: Expr }
  );
