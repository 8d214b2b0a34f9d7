/**
 * `berth job init [-short] [FILE]`: writes an example Nomad job file (default
 * `example.nomad.hcl`) that runs on berth as it is: a small HTTP service on a dynamic port with a
 * Nomad-provider service and its HTTP check, a restart policy and an update block. Nomad's own
 * example names the docker driver; berth's runs `node` with raw_exec, which every berth host has.
 * @module
 */
import { writeFileSync } from 'node:fs';
import { InputError, UsageError } from '../errors.ts';
import { writeLine } from '../io.ts';
import { nomadCommand } from '../nomad/nomad-command.ts';
import { errorText } from '../../../model/error-text.ts';

const HELP = `usage: berth job init [-short] [-json] [FILE]

Writes an example job to FILE (default example.nomad.hcl, or example.nomad.json with -json)
that berth runs as it is: berth job run example.nomad.hcl.
  -short   without the explaining comments
  -json    the job in Nomad's API JSON instead of HCL
Exit codes: 0 written; 2 usage error, or FILE exists or cannot be written.`;

/** The server the example runs: answers every request on the port Nomad gave it. */
const SERVER = `const { NOMAD_ALLOC_ID: id, NOMAD_IP_http: ip, NOMAD_PORT_http: port } = process.env; require('http').createServer((q, s) => { console.log(q.method, q.url); s.end('hello from ' + id + '\\n') }).listen(+port, ip, () => console.log('listening on ' + ip + ':' + port))`;

/** The example job, with comments saying what each block does (left out by `-short`). */
const EXAMPLE: Array<[line: string, comment?: string]> = [
  ['job "example" {', 'A job is what you submit: one or more task groups, placed together.'],
  ['  type = "service"', 'service runs until stopped; batch runs to completion.'],
  [''],
  ['  update {', 'How a new version replaces the running one: one alloc at a time, each healthy first.'],
  ['    max_parallel     = 1'],
  ['    min_healthy_time = "2s"'],
  ['    healthy_deadline = "1m"'],
  ['    auto_revert      = true'],
  ['  }'],
  [''],
  ['  group "web" {', 'A group is placed as one allocation, count times; its tasks share an alloc dir.'],
  ['    count = 1'],
  [''],
  ['    network {', 'A dynamic host port, labelled "http": the task reads it as NOMAD_PORT_http.'],
  ['      port "http" {}'],
  ['    }'],
  [''],
  ['    service {', "Registered in the agent's own catalog (berth service list); its check decides health."],
  ['      name     = "example-web"'],
  ['      port     = "http"'],
  ['      provider = "nomad"'],
  [''],
  ['      check {'],
  ['        type     = "http"'],
  ['        path     = "/"'],
  ['        interval = "3s"'],
  ['        timeout  = "2s"'],
  ['      }'],
  ['    }'],
  [''],
  ['    restart {', 'A task that exits is restarted in place: 2 times in 30m, 15s apart, then the alloc fails.'],
  ['      attempts = 2'],
  ['      interval = "30m"'],
  ['      delay    = "15s"'],
  ['      mode     = "fail"'],
  ['    }'],
  [''],
  ['    task "server" {', "raw_exec runs a command on the host as the agent's user; exec would run it in a chroot."],
  ['      driver = "raw_exec"'],
  [''],
  ['      config {'],
  ['        command = "node"'],
  [`        args    = ["-e", ${JSON.stringify(SERVER)}]`],
  ['      }'],
  [''],
  ['      resources {', 'What the scheduler reserves on the node: MHz of CPU and MiB of memory.'],
  ['        cpu    = 100'],
  ['        memory = 64'],
  ['      }'],
  ['    }'],
  ['  }'],
  ['}'],
];

/** The example job file; `short` leaves the comments out. */
export function exampleJob(short: boolean): string {
  const lines: string[] = [];
  for (const [line, comment] of EXAMPLE) {
    if (comment && !short) lines.push(`${line.match(/^ */)![0]}# ${comment}`);
    lines.push(line);
  }
  return `${lines.join('\n')}\n`;
}

/** `berth job init`. */
export const jobInitCommand = nomadCommand(
  { command: 'job init', summary: 'write an example job file', help: HELP },
  { short: 'boolean', json: 'boolean', connect: 'boolean' },
  async ({ flags, positionals, io }) => {
    if (flags.connect) throw new UsageError('-connect: berth has no service mesh (Consul Connect)', 'job init');
    if (positionals.length > 1) throw new UsageError('expects at most one file name', 'job init');
    const file = positionals[0] ?? (flags.json ? 'example.nomad.json' : 'example.nomad.hcl');
    let text = exampleJob(flags.short === true);
    if (flags.json) {
      const { parseJobspec } = await import('../../../agent/jobspec/index.ts');
      text = `${JSON.stringify({ Job: await parseJobspec(text, { filename: 'example.nomad.hcl' }) }, null, 4)}\n`;
    }
    try {
      writeFileSync(file, text, { flag: 'wx' });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new InputError(file, code === 'EEXIST' ? 'already exists' : `cannot write: ${errorText(err)}`, [], { cause: err });
    }
    writeLine(io.stdout, `Example job file written to ${file}`);
    return 0;
  },
);
