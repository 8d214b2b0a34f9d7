/**
 * The parse tree of a Go template (`text/template/parse/node.go`) and Go's `String()` of each node,
 * which exec errors quote as their context.
 * @module
 */
import { quote } from './fmt.ts';

/** A list of nodes. */
export interface ListNode {
  type: 'list';
  pos: number;
  nodes: Node[];
}
/** Plain text. */
export interface TextNode {
  type: 'text';
  pos: number;
  text: string;
}
/** A pipeline: optional declarations then commands joined by `|`. */
export interface PipeNode {
  type: 'pipe';
  pos: number;
  line: number;
  isAssign: boolean;
  decl: VariableNode[];
  cmds: CommandNode[];
}
/** One command of a pipeline. */
export interface CommandNode {
  type: 'command';
  pos: number;
  args: Node[];
}
/** `{{pipeline}}`. */
export interface ActionNode {
  type: 'action';
  pos: number;
  line: number;
  pipe: PipeNode;
}
/** A function name. */
export interface IdentifierNode {
  type: 'identifier';
  pos: number;
  ident: string;
}
/** `$x.a.b`. */
export interface VariableNode {
  type: 'variable';
  pos: number;
  ident: string[];
}
/** `.`. */
export interface DotNode {
  type: 'dot';
  pos: number;
}
/** `nil`. */
export interface NilNode {
  type: 'nil';
  pos: number;
}
/** `.a.b`. */
export interface FieldNode {
  type: 'field';
  pos: number;
  ident: string[];
}
/** `(pipe).a.b`. */
export interface ChainNode {
  type: 'chain';
  pos: number;
  node: Node;
  field: string[];
}
/** `true` / `false`. */
export interface BoolNode {
  type: 'bool';
  pos: number;
  value: boolean;
}
/** A number constant with Go's untyped-constant flags. */
export interface NumberNode {
  type: 'number';
  pos: number;
  text: string;
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  isComplex: boolean;
  /** The real and imaginary parts of a complex constant. */
  complex128?: readonly [number, number];
  int64: number;
  float64: number;
}
/** A string constant: `quoted` as written, `text` unquoted. */
export interface StringNode {
  type: 'string';
  pos: number;
  quoted: string;
  text: string;
}
/** `{{end}}` (parser-internal). */
export interface EndNode {
  type: 'end';
  pos: number;
}
/** `{{else}}` (parser-internal). */
export interface ElseNode {
  type: 'else';
  pos: number;
  line: number;
}
/** `{{break}}`. */
export interface BreakNode {
  type: 'break';
  pos: number;
  line: number;
}
/** `{{continue}}`. */
export interface ContinueNode {
  type: 'continue';
  pos: number;
  line: number;
}
/** `if`, `range` or `with`. */
export interface BranchNode {
  type: 'if' | 'range' | 'with';
  pos: number;
  line: number;
  pipe: PipeNode;
  list: ListNode;
  elseList: ListNode | null;
}
/** `{{template "name" pipe}}`. */
export interface TemplateNode {
  type: 'template';
  pos: number;
  line: number;
  name: string;
  pipe: PipeNode | null;
}

/** Any node. */
export type Node =
  | ListNode
  | TextNode
  | PipeNode
  | CommandNode
  | ActionNode
  | IdentifierNode
  | VariableNode
  | DotNode
  | NilNode
  | FieldNode
  | ChainNode
  | BoolNode
  | NumberNode
  | StringNode
  | EndNode
  | ElseNode
  | BreakNode
  | ContinueNode
  | BranchNode
  | TemplateNode;

const pipeString = (p: PipeNode): string => {
  let s = '';
  if (p.decl.length > 0) s += p.decl.map(nodeString).join(', ') + ' := ';
  return s + p.cmds.map(nodeString).join(' | ');
};

/** Go's `Node.String()`. */
export function nodeString(n: Node): string {
  switch (n.type) {
    case 'list':
      return n.nodes.map(nodeString).join('');
    case 'text':
      return `${quote(n.text)}`;
    case 'pipe':
      return pipeString(n);
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? '(' + nodeString(a) + ')' : nodeString(a))).join(' ');
    case 'action':
      return `{{${nodeString(n.pipe)}}}`;
    case 'identifier':
      return n.ident;
    case 'variable':
      return n.ident.join('.');
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'field':
      return n.ident.map((i) => '.' + i).join('');
    case 'chain': {
      let s = n.node.type === 'pipe' ? '(' + nodeString(n.node) + ')' : nodeString(n.node);
      for (const f of n.field) s += '.' + f;
      return s;
    }
    case 'bool':
      return n.value ? 'true' : 'false';
    case 'number':
      return n.text;
    case 'string':
      return n.quoted;
    case 'end':
      return '{{end}}';
    case 'else':
      return '{{else}}';
    case 'break':
      return '{{break}}';
    case 'continue':
      return '{{continue}}';
    case 'if':
    case 'range':
    case 'with': {
      let s = `{{${n.type} ${nodeString(n.pipe)}}}${nodeString(n.list)}`;
      if (n.elseList) s += `{{else}}${nodeString(n.elseList)}`;
      return s + '{{end}}';
    }
    case 'template':
      return n.pipe ? `{{template ${quote(n.name)} ${nodeString(n.pipe)}}}` : `{{template ${quote(n.name)}}}`;
  }
}

/** Go's `parse.IsEmptyTree`. */
export function isEmptyTree(n: Node | null): boolean {
  if (!n) return true;
  switch (n.type) {
    case 'list':
      return n.nodes.every(isEmptyTree);
    case 'text':
      return n.text.replace(/[\s\u0085]/g, '') === '';
    default:
      return false;
  }
}
