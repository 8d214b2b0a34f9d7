/**
 * `berth job run`'s exit code from what the agent reports, the agent being the far side of the
 * CLI's boundary (a loopback server with Nomad-shaped answers): a lost allocation is a failure,
 * and so is a deployment that failed after every allocation ran.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMain } from '../support/cli.ts';

const ALLOC = 'aaaaaaaa-0000-0000-0000-000000000000';
const DEP = 'dddddddd-0000-0000-0000-000000000000';

/** An agent that placed one alloc, which ends `clientStatus`, in a deployment that ends `deployment`. */
function agent(clientStatus: string, deployment: string | undefined): Promise<{ server: Server; url: string }> {
  const alloc = { ID: ALLOC, NodeID: 'n', TaskGroup: 'g', ClientStatus: clientStatus, JobType: 'service', ...(deployment ? { DeploymentID: DEP } : {}) };
  const routes: Record<string, unknown> = {
    '/v1/jobs': { EvalID: 'e1', Warnings: '' },
    '/v1/evaluation/e1': { ID: 'e1', Status: 'complete', JobID: 'j', CreateIndex: 5 },
    '/v1/evaluation/e1/allocations': [alloc],
    '/v1/allocations': [alloc],
    [`/v1/allocation/${ALLOC}`]: alloc,
    [`/v1/deployment/${DEP}`]: { ID: DEP, Status: deployment, StatusDescription: `Deployment ${deployment}`, TaskGroups: {} },
  };
  const server = createServer((req, res) => {
    const body = routes[new URL(req.url!, 'http://x').pathname];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json', 'x-nomad-index': '7' }).end(JSON.stringify(body ?? 'not found'));
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

describe('berth job run: the exit code follows the outcome', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-run-outcome-'));
    file = join(dir, 'j.nomad.hcl');
    writeFileSync(file, 'job "j" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config { command = "/bin/true" }\n    }\n  }\n}\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cases: Array<[string, string, string | undefined, number]> = [
    ['a running alloc, no deployment', 'running', undefined, 0],
    ['a lost alloc', 'lost', undefined, 1],
    ['a failed alloc', 'failed', undefined, 1],
    ['a running alloc whose deployment succeeded', 'running', 'successful', 0],
    ['a running alloc whose deployment failed', 'running', 'failed', 1],
  ];
  for (const [what, status, deployment, code] of cases) {
    it(`${what}: exit ${code}`, async () => {
      const { server, url } = await agent(status, deployment);
      try {
        const r = await runMain(['job', 'run', '-address', url, file]);
        expect(r.code, r.stdout + r.stderr).to.equal(code);
        expect(r.stdout).to.include(`Allocation "aaaaaaaa" status "created" -> "${status}"`);
      } finally {
        await new Promise<void>((res) => server.close(() => res()));
      }
    });
  }
});
