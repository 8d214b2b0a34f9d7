/**
 * Running `berth agent` in specs: a real child process on a free port (`-port 0`), its URL read
 * from its first line, driven only over HTTP and the CLI; and small HTTP helpers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CliProcess, runCli, runMain, type CliResult } from './cli.ts';

/** A running agent child. */
export class AgentProcess {
  readonly proc: CliProcess;
  url = '';
  token: string | undefined;

  /** `tmp`: the child's TMPDIR, when several agents must share one (a `-dev` agent's dir lives there). */
  constructor(argv: string[], opts: { tmp?: string } = {}) {
    this.proc = new CliProcess(['agent', '-port', '0', ...argv], opts);
  }

  /** Resolves once the agent serves (and, with ACLs on, printed its token). */
  async ready(): Promise<this> {
    await this.proc.waitFor(/listening on (\S+)/);
    this.url = /listening on (\S+)/.exec(this.proc.stdout)![1]!;
    const t = /management token: (\S+)/.exec(this.proc.stderr);
    if (t) this.token = t[1];
    return this;
  }

  /** SIGTERM, and waits for the exit. */
  async stop(): Promise<CliResult> {
    this.proc.child.kill('SIGTERM');
    const r = await this.proc.exited;
    this.proc.leftovers();
    return r;
  }

  /** SIGKILL (a crash), and waits for the exit. */
  async crash(): Promise<void> {
    this.proc.child.kill('SIGKILL');
    await this.proc.exited;
    this.proc.leftovers();
  }

  /** `berth <argv>` as a child process talking to this agent. */
  async cli(argv: string[]): Promise<CliResult> {
    const before = process.env.BERTH_ADDR;
    const tokenBefore = process.env.BERTH_TOKEN;
    process.env.BERTH_ADDR = this.url;
    if (this.token) process.env.BERTH_TOKEN = this.token;
    try {
      return await runCli(argv);
    } finally {
      if (before === undefined) delete process.env.BERTH_ADDR;
      else process.env.BERTH_ADDR = before;
      if (tokenBefore === undefined) delete process.env.BERTH_TOKEN;
      else process.env.BERTH_TOKEN = tokenBefore;
    }
  }

  /** `berth <argv>` in this process (the same code as the binary, no process start) against this agent. */
  async main(argv: string[]): Promise<CliResult> {
    const before = process.env.BERTH_ADDR;
    const tokenBefore = process.env.BERTH_TOKEN;
    process.env.BERTH_ADDR = this.url;
    if (this.token) process.env.BERTH_TOKEN = this.token;
    try {
      return await runMain(argv);
    } finally {
      if (before === undefined) delete process.env.BERTH_ADDR;
      else process.env.BERTH_ADDR = before;
      if (tokenBefore === undefined) delete process.env.BERTH_TOKEN;
      else process.env.BERTH_TOKEN = tokenBefore;
    }
  }

  /** An HTTP request to the agent (with its token when it has one). */
  req(method: string, path: string, body?: unknown, opts: HttpOptions = {}): Promise<HttpResult> {
    return http(method, this.url + path, body, { ...(this.token ? { headers: { 'X-Nomad-Token': this.token } } : {}), ...opts });
  }
}

/** Options of {@link http}. */
export interface HttpOptions {
  headers?: Record<string, string>;
  ca?: Buffer;
  signal?: AbortSignal;
}

/** A whole HTTP answer. */
export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body as JSON (undefined when it is not JSON). */
  json: any;
}

/** One HTTP(S) request, read to the end. */
export function http(method: string, url: string, body?: unknown, opts: HttpOptions = {}): Promise<HttpResult> {
  const u = new URL(url);
  const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(
      u,
      { method, headers: opts.headers ?? {}, ...(opts.ca ? { ca: opts.ca } : {}), ...(opts.signal ? { signal: opts.signal } : {}) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Waits, with blocking queries on `path` (`?index=`), until `test` accepts its JSON; resolves
 * with that JSON. No polling: each round waits for the agent's next change.
 */
export async function waitFor(agent: Pick<AgentProcess, 'req'>, path: string, test: (json: any) => boolean, what: string): Promise<any> {
  let index = 0;
  for (let i = 0; i < 500; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const r = await agent.req('GET', `${path}${sep}index=${index}&wait=20s`);
    if (r.status === 200 && test(r.json)) return r.json;
    index = Number(r.headers['x-nomad-index'] ?? 0);
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** Pids of processes whose command line contains `marker`. */
export function pidsWith(marker: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker)) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out.filter((p) => p !== process.pid);
}

/**
 * A raw_exec service job whose task runs `script` and then sleeps, with `marker` on its command
 * line so `pidsWith(marker)` finds its processes (the crash, repair and sweep specs).
 */
export function markerJobHcl(id: string, marker: string, opts: { count?: number; script?: string } = {}): string {
  const script = `${opts.script ? `${opts.script}; ` : ''}sleep 1000; : ${marker}`;
  return `job "${id}" {
  group "g" {
${opts.count !== undefined ? `    count = ${opts.count}\n` : ''}    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args = ["-c", ${JSON.stringify(script)}]
      }
      resources {
        cpu = 50
        memory = 32
      }
    }
  }
}
`;
}
