/**
 * Docker in specs: the local Engine (`/var/run/docker.sock`), and tiny images the specs build
 * themselves (there is no public registry here): /bin/busybox and its applets as symlinks,
 * imported from a rootfs tarball.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import * as tar from 'tar';
import { expect } from 'chai';
import { dockerClient } from '../../actors/drivers/docker/docker-driver.ts';
import { waitFor, type AgentProcess } from './agent.ts';

/** The Engine the specs use. */
export const engine = dockerClient('unix:///var/run/docker.sock');

/** Whether an Engine answers. */
export async function engineAnswers(): Promise<boolean> {
  try {
    await engine.ping();
    return true;
  } catch {
    return false;
  }
}

const APPLETS = ['sh', 'echo', 'sleep', 'cat', 'true', 'false', 'httpd', 'kill', 'id', 'hostname', 'wget', 'head', 'tr', 'yes', 'ls'];

/** Imports a busybox image as `repo:tag` (replacing one of that name). */
export async function importBusybox(repo: string, tag = '1'): Promise<string> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'berth-docker-rootfs-'));
  try {
    fs.mkdirSync(path.join(root, 'bin'));
    fs.mkdirSync(path.join(root, 'tmp'));
    fs.copyFileSync('/bin/busybox', path.join(root, 'bin', 'busybox'));
    fs.chmodSync(path.join(root, 'bin', 'busybox'), 0o755);
    for (const a of APPLETS) fs.symlinkSync('busybox', path.join(root, 'bin', a));
    const stream = Readable.from(tar.c({ cwd: root }, ['bin', 'tmp']) as unknown as AsyncIterable<Buffer>);
    const out = (await engine.importImage(stream as never, { repo, tag, changes: ['ENV PATH=/bin'] } as never)) as unknown as NodeJS.ReadableStream;
    await new Promise((resolve, reject) => engine.modem.followProgress(out, (e: Error | null) => (e ? reject(e) : resolve(undefined))));
    return `${repo}:${tag}`;
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Removes an image (and nothing else), whether or not it exists. */
export async function removeImage(ref: string): Promise<void> {
  await engine
    .getImage(ref)
    .remove({ force: true })
    .catch(() => {});
}

/** Options of {@link dockerJob}. */
export interface DockerJobOptions {
  id: string;
  image: string;
  type?: 'service' | 'batch';
  /** The container's `sh -c` script. */
  script: string;
  memory?: number;
  /** HCL lines added to the task's `config` block. */
  config?: string;
  /** HCL lines added to the task (artifact blocks, kill_timeout, ...). */
  task?: string;
  /** HCL lines added to the group (network, ...). */
  group?: string;
}

/** A one-task docker job file running `sh -c <script>`; batch jobs neither restart nor reschedule. */
export function dockerJob(o: DockerJobOptions): string {
  const type = o.type ?? 'batch';
  return `job "${o.id}" {
  type = "${type}"
  group "g" {
${type === 'batch' ? '    restart {\n      attempts = 0\n    }\n    reschedule {\n      attempts = 0\n    }\n' : ''}${o.group ?? ''}
    task "t" {
      driver = "docker"
${o.task ?? ''}
      config {
        image   = "${o.image}"
        command = "sh"
        args    = ["-c", ${JSON.stringify(o.script)}]
${o.config ?? ''}
      }
      resources {
        cpu    = 100
        memory = ${o.memory ?? 64}
      }
    }
  }
}`;
}

/** Containers berth's alloc-id label names for `allocId`. */
export const containersOf = (allocId: string) => engine.listContainers({ all: true, filters: { label: [`com.hashicorp.nomad.alloc_id=${allocId}`] } });

/** Resolves once `test()` holds, checking every 50 ms for at most `ms` (for the Engine's own state, which has no blocking query). */
export async function engineUntil(test: () => Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Parses `hcl` through the agent and registers the job. */
export async function runJob(agent: Pick<AgentProcess, 'req'>, hcl: string): Promise<void> {
  const parsed = await agent.req('POST', '/v1/jobs/parse', { JobHCL: hcl });
  expect(parsed.status, parsed.text).to.equal(200);
  const r = await agent.req('POST', '/v1/jobs', { Job: parsed.json });
  expect(r.status, r.text).to.equal(200);
}

/** The first alloc of `job` that `test` accepts, waited for with blocking queries. */
export async function allocOf(agent: Pick<AgentProcess, 'req'>, job: string, test: (a: any) => boolean, what: string): Promise<any> {
  return (await waitFor(agent, `/v1/job/${job}/allocations`, (as: any[]) => as.some(test), what)).find(test);
}
