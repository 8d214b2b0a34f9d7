/**
 * Writes `spec/fixtures/nomad-api-structs.ts`: the fields (name, Go type, `omitempty`) of the
 * structs in Nomad's Go API package (`api/*.go`, MPL-2.0) that berth's agent serves, and of every
 * struct they reach, read from a Nomad checkout:
 *
 * ```
 * npx tsx scripts/nomad-api-structs.ts /path/to/nomad/api [commit]
 * ```
 *
 * The reader knows just enough Go: `type X struct { ... }` blocks (fields, several names on one
 * line, embedded structs, `json:"name,omitempty"` and `json:"-"` tags), and named non-struct types
 * (`type Topic string`), which are written as what they stand for. A type that writes its own JSON
 * (a `MarshalJSON` method) is listed in {@link CUSTOM_JSON} with the shape it writes.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The objects berth serves, the roots of the closure. */
const ROOTS = [
  'Job',
  'JobListStub',
  'JobSummary',
  'Allocation',
  'AllocationListStub',
  'Evaluation',
  'Deployment',
  'Node',
  'NodeListStub',
  'ACLToken',
  'RaftConfiguration',
  'SchedulerConfiguration',
  'AgentSelf',
  'ServerMembers',
  // Write answers and the smaller objects beside the main ones.
  'JobRegisterResponse',
  'JobDeregisterResponse',
  'JobPlanResponse',
  'JobVersionsResponse',
  'JobDispatchResponse',
  'JobScaleStatusResponse',
  'JobValidateResponse',
  'AllocStopResponse',
  'AllocResourceUsage',
  'AllocFileInfo',
  'ServiceRegistration',
  'ServiceRegistrationListStub',
  'Variable',
  'VariableMetadata',
  'DeploymentUpdateResponse',
  'SchedulerConfigurationResponse',
  'SchedulerSetConfigurationResponse',
  'Event',
];

/** Fields whose JSON is not their Go type's (the type has a `MarshalJSON`), or that the server's struct adds. */
const CUSTOM_JSON: Record<string, Record<string, string>> = {
  // ACLToken.MarshalJSON writes the TTL as a Go duration string ("2m"), "" when unset.
  ACLToken: { ExpirationTTL: 'string omitempty' },
  // The server's structs.Event carries the namespace the api struct leaves out (its decoder drops it).
  Event: { Namespace: 'string' },
  // The server's JobPlanResponse embeds its WriteMeta (the api struct does not).
  JobPlanResponse: { Index: 'uint64 omitempty' },
};

/**
 * The api package's `QueryMeta` and `WriteMeta` are filled from response headers, not the body.
 * What the body carries in their place is the server's own embedded meta (`structs.QueryMeta`,
 * `structs.WriteMeta`), which Go's decoder ignores: the fields below, absent where a route has none.
 */
const SERVER_META: Record<string, Field[]> = {
  QueryMeta: [
    { name: 'Index', type: 'uint64', omitempty: true },
    { name: 'LastContact', type: 'time.Duration', omitempty: true },
    { name: 'KnownLeader', type: 'bool', omitempty: true },
    { name: 'NextToken', type: 'string', omitempty: true },
  ],
  WriteMeta: [{ name: 'Index', type: 'uint64', omitempty: true }],
};

interface Field {
  name: string;
  type: string;
  omitempty: boolean;
}

function stripComments(src: string): string {
  return src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
}

/** Every `type X struct {...}` and `type X <other>` of the files. */
function readPackage(dir: string): { structs: Map<string, Field[]>; named: Map<string, string> } {
  const structs = new Map<string, Field[]>();
  const named = new Map<string, string>();
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.go') || f.endsWith('_test.go')) continue;
    const src = stripComments(readFileSync(join(dir, f), 'utf8'));
    const re = /^type\s+([A-Z]\w*)\s+(.*)$/gm;
    let m: RegExpExecArray | null;
    while ((m = re.exec(src))) {
      const [, name, rest] = m;
      if (/^struct\s*\{/.test(rest!)) {
        const start = src.indexOf('{', m.index);
        let depth = 0;
        let end = start;
        for (; end < src.length; end++) {
          if (src[end] === '{') depth++;
          else if (src[end] === '}' && --depth === 0) break;
        }
        structs.set(name!, readFields(src.slice(start + 1, end), name!));
      } else if (!/^interface\s*\{/.test(rest!) && !/^func/.test(rest!)) {
        named.set(name!, rest!.trim().replace(/^=\s*/, ''));
      }
    }
  }
  for (const [name, fields] of Object.entries(SERVER_META)) structs.set(name, fields);
  return { structs, named };
}

function readFields(body: string, owner: string): Field[] {
  const out: Field[] = [];
  for (const raw of body.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const tag = /`([^`]*)`/.exec(line)?.[1] ?? '';
    const decl = line.replace(/`[^`]*`/, '').trim();
    const json = /json:"([^"]*)"/.exec(tag)?.[1];
    if (json === '-') continue;
    const [jsonName, ...opts] = (json ?? '').split(',');
    const omitempty = opts.includes('omitempty');
    const m = /^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s+(.+)$/.exec(decl);
    if (!m || /^(map|\[|\*|struct|func|chan)/.test(decl)) {
      // An embedded struct: its fields are promoted.
      const t = decl.replace(/^\*/, '');
      if (/^[A-Z]\w*$/.test(t)) out.push({ name: `...${t}`, type: t, omitempty: false });
      else throw new Error(`${owner}: cannot read ${JSON.stringify(line)}`);
      continue;
    }
    const names = m[1]!.split(',').map((s) => s.trim());
    const type = m[2]!.trim();
    for (const n of names) {
      if (!/^[A-Z]/.test(n)) continue; // unexported
      out.push({ name: jsonName || n, type, omitempty });
    }
  }
  return out;
}

/** The struct names a Go type expression mentions. */
function mentioned(type: string): string[] {
  return [...type.matchAll(/(?<![.\w])([A-Z]\w*)/g)].map((x) => x[1]!);
}

/** The structs `roots` reach, each with its fields flattened (embedded structs promoted, named types resolved). */
function closure(structs: Map<string, Field[]>, named: Map<string, string>, roots: string[], dir: string): Map<string, Field[]> {
  const resolveNamed = (t: string): string => {
    return t.replace(/(?<![.\w])([A-Z]\w*)/g, (n) => (named.has(n) && !structs.has(n) ? resolveNamed(named.get(n)!) : n));
  };
  const done = new Map<string, Field[]>();
  const todo = [...roots];
  while (todo.length) {
    const s = todo.shift()!;
    if (done.has(s)) continue;
    const fields = structs.get(s);
    if (!fields) throw new Error(`no struct ${s} in ${dir}`);
    const flat: Field[] = [];
    const expand = (fs: Field[]) => {
      for (const f of fs) {
        if (f.name.startsWith('...')) expand(structs.get(f.type) ?? []);
        else flat.push({ ...f, type: resolveNamed(f.type) });
      }
    };
    expand(fields);
    for (const [k, v] of Object.entries(CUSTOM_JSON[s] ?? {})) {
      const f = flat.find((x) => x.name === k);
      if (f) {
        f.type = v.replace(/ omitempty$/, '');
        f.omitempty = v.endsWith(' omitempty');
      } else flat.push({ name: k, type: v.replace(/ omitempty$/, ''), omitempty: v.endsWith(' omitempty') });
    }
    done.set(s, flat);
    for (const f of flat) for (const n of mentioned(f.type)) if (structs.has(n) && !done.has(n)) todo.push(n);
  }
  return done;
}

/** The structs as a TypeScript object literal's lines. */
function table(done: Map<string, Field[]>): string[] {
  const lines: string[] = [];
  for (const n of [...done.keys()].sort()) {
    lines.push(`  ${n}: {`);
    for (const f of done.get(n)!) lines.push(`    ${/^\w+$/.test(f.name) ? f.name : JSON.stringify(f.name)}: '${f.type}${f.omitempty ? ' omitempty' : ''}',`);
    lines.push('  },');
  }
  return lines;
}

function main(): void {
  const [dir, commit = ''] = process.argv.slice(2);
  if (!dir) throw new Error('usage: nomad-api-structs.ts <nomad>/api [commit]');
  const { structs, named } = readPackage(dir);

  const all = closure(structs, named, ROOTS, dir);
  const spec = [
    '/**',
    " * The fields of Nomad's Go API structs (`api/*.go`, MPL-2.0) that berth's agent serves, and of",
    ' * every struct they reach: each field as its JSON name and Go type, `omitempty` where the tag says',
    ' * so. Written by `scripts/nomad-api-structs.ts` from Nomad; do not edit by hand (run the script',
    ' * again on a newer checkout, and read the diff: it is the API that changed).',
    ...(commit ? [` * Nomad commit: ${commit}.`] : []),
    ' */',
    '',
    '/** A field: its Go type, with ` omitempty` when its tag has it. */',
    'export type GoField = string;',
    '',
    '/** Struct name -> field name -> Go type. */',
    'export const NOMAD_API_STRUCTS: Record<string, Record<string, GoField>> = {',
    ...table(all),
    '};',
    '',
  ];
  writeFileSync(new URL('../spec/fixtures/nomad-api-structs.ts', import.meta.url), spec.join('\n'));

  // The job's structs alone, for the agent: what a job looks like with every field (completeApiJob).
  const job = closure(structs, named, ['Job'], dir);
  const agent = [
    '/**',
    " * The fields of Nomad's API `Job` and every struct it reaches (Nomad's `api/*.go`, MPL-2.0): each",
    ' * field as its JSON name and Go type, ` omitempty` where its tag says so. What `completeApiJob`',
    " * fills a job out with, so a job reads as Nomad's servers write one (every field, unset ones",
    ' * zero). Written by `scripts/nomad-api-structs.ts` from Nomad; do not edit by hand.',
    ...(commit ? [` * Nomad commit: ${commit}.`] : []),
    ' * @module',
    ' */',
    '',
    '/** Struct name -> field name -> Go type (with ` omitempty`). */',
    'export const API_JOB_STRUCTS: Readonly<Record<string, Readonly<Record<string, string>>>> = {',
    ...table(job),
    '};',
    '',
  ];
  writeFileSync(new URL('../agent/jobspec/api-job-structs.ts', import.meta.url), agent.join('\n'));
  execFileSync('npx', ['prettier', '--write', 'spec/fixtures/nomad-api-structs.ts', 'agent/jobspec/api-job-structs.ts'], {
    cwd: new URL('..', import.meta.url),
    stdio: 'ignore',
  });
  console.log(`${all.size} structs (${job.size} in the job)`);
}

main();
