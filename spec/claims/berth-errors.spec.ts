import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIRS = ['index.ts', 'model', 'machines', 'bus', 'actors', 'bin'];

/** Every .ts file under the library's and the CLI's folders (not specs, not the simulator). */
function sources(): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    if (p.endsWith('.ts')) return void out.push(p);
    let entries;
    try {
      entries = readdirSync(p, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory() || e.name.endsWith('.ts')) walk(join(p, e.name));
  };
  for (const d of DIRS) walk(join(ROOT, d));
  return out.filter((f) => !f.endsWith('.d.ts'));
}

/**
 * Plain `Error`s thrown on purpose that never reach a caller of berth as they are, each with why.
 * Keyed by file and the start of the message.
 */
const ALLOWED: Array<{ file: string; message: RegExp; why: string }> = [
  { file: 'actors/allocdir/chroot.ts', message: /./, why: 'inside the chroot builder: embed() and embedInline() rethrow every one as a ChrootError' },
  { file: 'actors/allocdir/snapshot.ts', message: /changed size while being read/, why: 'inside the tar walk: it is rethrown as a SnapshotStreamError' },
  { file: 'actors/runner/hooks.ts', message: /message/, why: "a prerun hook's failure: the chart turns it into the alloc's Setup Failure event text" },
  {
    file: 'model/status.ts',
    message: /failed to lookup task group/,
    why: 'an internal invariant (callers hold a parsed alloc, whose group exists), worded as Nomad words it',
  },
  { file: 'bin/demo-servers.ts', message: /alloc lookup failed/, why: "the demo's fake servers answer as Nomad's would (an RPC error string)" },
  {
    file: 'actors/templates/exec.ts',
    message: /TemplateExecError/,
    why: 'a control-flow carrier: execute() unwraps it and throws the TemplateExecError it holds',
  },
  { file: 'actors/templates/parse.ts', message: /template: /, why: 'a control-flow carrier: parse() catches it and throws a TemplateParseError with its text' },
  { file: 'actors/templates/unquote.ts', message: /^\)/, why: "Go's strconv.ErrSyntax: the lexer and parser catch it and report Go's own parse error" },
];

describe('claim: every error berth throws on purpose is a named class extending BerthError', () => {
  it('each `throw new X(` / `reject(new X(` in the library and CLI names a BerthError subclass, or is allowed with why', () => {
    const files = sources();
    const text = new Map(files.map((f) => [relative(ROOT, f), readFileSync(f, 'utf8')]));
    // The class tree: `class A extends B`, followed to BerthError.
    const parent = new Map<string, string>();
    for (const src of text.values()) for (const m of src.matchAll(/class\s+(\w+)(?:<[^>]*>)?\s+extends\s+(\w+)/g)) parent.set(m[1]!, m[2]!);
    const isBerth = (name: string): boolean => {
      for (let n: string | undefined = name, i = 0; n && i < 20; n = parent.get(n), i++) if (n === 'BerthError') return true;
      return false;
    };
    expect(isBerth('InvalidAllocationError'), 'the scan finds the tree').to.equal(true);
    const bad: string[] = [];
    for (const [file, src] of text) {
      for (const m of src.matchAll(/(?:throw|reject\()\s*new\s+(\w+)\(([^\n]{0,60})/g)) {
        const cls = m[1]!;
        if (isBerth(cls)) continue;
        if (ALLOWED.some((a) => a.file === file && a.message.test(m[2]!))) continue;
        const line = src.slice(0, m.index).split('\n').length;
        bad.push(`${file}:${line}: ${m[0]}`);
      }
    }
    expect(bad).to.deep.equal([]);
  });
});
