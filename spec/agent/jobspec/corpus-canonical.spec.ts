/**
 * Every real job file of the shared corpus that berth parses, canonicalised by berth and by an
 * independent port of Nomad's API canonicalization (spec/support/nomad-canonicalize.ts), compared
 * WHOLE: berth's non-canonical API JSON (what `/v1/jobs/parse` answers with `Canonicalize: false`)
 * through the port must deep-equal berth's canonical API JSON (what it answers with `true`), both
 * marshalled as Nomad's are (`completeApiJob`: every field, unset ones zero). The route's
 * `parseJobFile` is `parseJobspec` with filesystem functions off; here they are on, as on the CLI
 * and in `npm run corpus`, so the files that read a file with `file()` are compared too. Where
 * berth differs on purpose, and docs/ says so, the difference is in EXCEPTIONS; each must still
 * apply. Hand-written files below cover what the corpus does not reach.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJobspec } from '../../../agent/jobspec/index.ts';
import { completeApiJob } from '../../../agent/jobspec/complete.ts';
import { cliVars } from '../../../scripts/corpus-run.ts';
import { corpusDir, runCorpus } from '../../../scripts/corpus.ts';
import { nomadCanonicalize } from '../../support/nomad-canonicalize.ts';
import { skipSaying } from '../../support/skips.ts';

type Obj = Record<string, unknown>;

/** A value berth writes unlike Nomad's canonicalization, on purpose. */
interface Exception {
  /** Where, `[]` standing for every element of an array. */
  path: string;
  berth: unknown;
  nomad: unknown;
  /** Why, and where docs/ says so. */
  why: string;
}

const EXCEPTIONS: Exception[] = [
  {
    path: 'TaskGroups[].Services[].Provider',
    berth: 'nomad',
    nomad: 'consul',
    why: 'berth has no Consul: a service without provider is a Nomad service (docs/jobspec.md, "Defaults"; the register warnings say so)',
  },
  {
    path: 'TaskGroups[].Tasks[].Services[].Provider',
    berth: 'nomad',
    nomad: 'consul',
    why: 'as for group services (docs/jobspec.md, "Defaults")',
  },
];

/** Each place `path` names in `o`: the object holding it and its key. */
function places(o: unknown, path: string): Array<{ holder: Obj; key: string }> {
  const [head, ...rest] = path.split('.');
  if (typeof o !== 'object' || o === null) return [];
  const obj = o as Obj;
  if (head!.endsWith('[]')) {
    const arr = obj[head!.slice(0, -2)];
    return Array.isArray(arr) ? arr.flatMap((e) => places(e, rest.join('.'))) : [];
  }
  return rest.length ? places(obj[head!], rest.join('.')) : head! in obj ? [{ holder: obj, key: head! }] : [];
}

/** Nomad's answer with the exceptions berth makes: each place where both are as the table says takes berth's value. */
function withExceptions(nomad: Obj, berth: Obj, used: Set<Exception>): Obj {
  for (const ex of EXCEPTIONS) {
    const n = places(nomad, ex.path);
    const b = places(berth, ex.path);
    n.forEach((p, i) => {
      if (p.holder[p.key] === ex.nomad && b[i]?.holder[b[i]!.key] === ex.berth) {
        p.holder[p.key] = ex.berth;
        used.add(ex);
      }
    });
  }
  return nomad;
}

/** Where `a` and `b` differ: `path: a's value, b's value` (an absent key is `absent`). */
function differences(a: unknown, b: unknown, path: string): string[] {
  if (JSON.stringify(a) === JSON.stringify(b) && (a === undefined) === (b === undefined)) return [];
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b)) {
    const x = a as Obj;
    const y = b as Obj;
    return [...new Set([...Object.keys(x), ...Object.keys(y)])].flatMap((k) =>
      k in x && k in y
        ? differences(x[k], y[k], `${path}.${k}`)
        : [`${path}.${k}: ${k in x ? JSON.stringify(x[k]) : 'absent'}, ${k in y ? JSON.stringify(y[k]) : 'absent'}`],
    );
  }
  return [`${path}: ${JSON.stringify(a)}, ${JSON.stringify(b)}`];
}

/** berth's canonical API JSON of `text` deep-equals the port's over berth's non-canonical one. */
async function compareWhole(text: string, filename: string, vars: Record<string, string>, used: Set<Exception>): Promise<void> {
  const raw = completeApiJob(await parseJobspec(text, { filename, vars, canonicalize: false }));
  const berth = completeApiJob(await parseJobspec(text, { filename, vars }));
  const nomad = completeApiJob(withExceptions(nomadCanonicalize(raw), berth, used));
  // Each difference by its path first (chai's diff of two large objects can come out empty).
  expect(differences(berth, nomad, '')).to.deep.equal([]);
  expect(berth).to.deep.equal(nomad);
}

const dir = corpusDir();
const parsed = existsSync(dir) ? (await runCorpus(dir))!.filter((r) => r.outcome === 'parsed').map((r) => r.file) : [];

describe("jobspec: the corpus's job files canonicalised by berth and by Nomad's rules, whole", () => {
  const used = new Set<Exception>();

  if (!existsSync(dir)) {
    it('the shared corpus of real job files (skipped when absent)', function () {
      skipSaying(this, `the corpus is absent (${dir}; set BERTH_CORPUS)`);
    });
    return;
  }

  for (const file of parsed) {
    it(file, async () => {
      const path = join(dir, file);
      const vars = existsSync(`${path}.vars`) ? cliVars(readFileSync(`${path}.vars`, 'utf8')) : {};
      await compareWhole(readFileSync(path, 'utf8'), path, vars, used);
    });
  }

  it('compares at least the 45 files that parse, and every exception still applies to one of them', () => {
    expect(parsed.length).to.be.at.least(45);
    expect(EXCEPTIONS.filter((e) => !used.has(e)).map((e) => e.path)).to.deep.equal([]);
  });
});

/** What the corpus's files do not reach: job-level policies merged into groups, check_restart merges, artifact and template modes. */
const HAND_WRITTEN: Record<string, string> = {
  'job-level update, reschedule and migrate merged into a group that sets part of each': `job "merge" {
  update { max_parallel = 2 }
  reschedule { attempts = 4 }
  migrate { max_parallel = 3 }
  group "g" {
    count = 2
    update { canary = 1 }
    reschedule { delay = "10s" }
    migrate { min_healthy_time = "20s" }
    restart { attempts = 5 }
    ephemeral_disk { size = 500 }
    disconnect { lost_after = "1h" }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/sleep" }
      restart { delay = "1s" }
      logs { max_files = 3 }
      resources { memory = 64 }
    }
  }
}
`,
  "check_restart: the service's merged into each check, a check's own limit and grace winning": `job "checks" {
  group "g" {
    network {
      port "http" {}
    }
    service {
      name     = "web"
      provider = "nomad"
      port     = "http"
      check_restart {
        limit           = 3
        ignore_warnings = true
      }
      check {
        type     = "http"
        path     = "/"
        interval = "10s"
        timeout  = "2s"
      }
      check {
        type     = "http"
        path     = "/ready"
        interval = "10s"
        timeout  = "2s"
        check_restart {
          limit = 5
          grace = "30s"
        }
      }
      check {
        type     = "http"
        path     = "/live"
        interval = "10s"
        timeout  = "2s"
        check_restart {
          limit           = 0
          ignore_warnings = false
        }
      }
    }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/sleep" }
    }
  }
}
`,
  'artifacts in each mode, templates with a signal and a change_script, a periodic batch job': `job "files" {
  type = "batch"
  periodic {
    crons     = ["@daily"]
    time_zone = "Europe/Paris"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      artifact { source = "https://example.com/a.tar.gz" }
      artifact {
        source = "https://example.com/dir/tool"
        mode   = "file"
      }
      artifact {
        source = "https://example.com/dir/tool2?archive=false"
        mode   = "file"
      }
      artifact {
        source      = "https://example.com/b.zip"
        destination = "local/b"
        mode        = "dir"
        options { checksum = "sha256:${'0'.repeat(64)}" }
      }
      template {
        data          = "x"
        destination   = "local/x"
        change_mode   = "signal"
        change_signal = "SIGUSR1"
      }
      template {
        data        = "y"
        destination = "local/y"
        change_mode = "script"
        change_script {
          command       = "/bin/true"
          timeout       = "10s"
          fail_on_error = false
        }
      }
    }
  }
}
`,
  'cores instead of cpu, services named by default, a task-level network, lifecycle and disconnect': `job "names" {
  type = "system"
  group "g" {
    disconnect { replace = false }
    service {
      provider = "nomad"
      meta {}
    }
    task "side" {
      driver = "raw_exec"
      config { command = "/bin/sleep" }
      lifecycle {
        hook    = "prestart"
        sidecar = true
      }
      resources { cores = 2 }
    }
    task "main" {
      driver = "raw_exec"
      config { command = "/bin/sleep" }
      service { provider = "nomad" }
      resources {
        cpu = 200
        network {
          port "p" {}
        }
      }
    }
  }
}
`,
};

describe("jobspec: hand-written job files canonicalised by berth and by Nomad's rules, whole", () => {
  const used = new Set<Exception>();
  for (const [title, text] of Object.entries(HAND_WRITTEN)) it(title, () => compareWhole(text, 'job.nomad.hcl', {}, used));
});
