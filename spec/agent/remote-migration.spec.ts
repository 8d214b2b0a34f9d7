/**
 * The #10200 remote path across two processes: agent A (a real `berth agent`) runs an alloc with
 * sticky, migrating data; on B (a berth client in this process, asking A through `NomadHttpRPC`)
 * a replacement whose previous alloc lives on A waits for it with a remote watcher (blocking
 * queries on A's `/v1/allocation/:id`), then pulls its data from A's API (`/v1/node/:id` gives
 * the address) and starts with it. Also: `NomadHttpRPC` against A alone (404 → null, 403 →
 * PermissionDeniedError), and A's per-alloc migrate tokens with ACLs on.
 */
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NomadHttpRPC, PermissionDeniedError } from '../../index.ts';
import { migrateTokenFor } from '../../agent/http/snapshot-route.ts';
import { AgentProcess, http, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';
import { nextMessage, useTempClients } from '../support/temp-client.ts';

const JOB = `job "data" {
  group "g" {
    ephemeral_disk {
      sticky  = true
      migrate = true
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args = ["-c", "echo precious > \${NOMAD_ALLOC_DIR}/data/kept; trap 'exit 0' TERM; while :; do sleep 0.2; done"]
      }
      kill_timeout = "1s"
      resources {
        cpu = 50
        memory = 32
      }
    }
  }
}
`;

describe('agent: NomadHttpRPC and a remote previous alloc on another agent', function () {
  this.timeout(90_000);
  const tempClient = useTempClients();
  let a: AgentProcess | undefined;
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-agent-remote-'));
  });
  afterEach(async () => {
    await a?.stop();
    a = undefined;
    await stopCliProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits on agent A for the previous alloc, then migrates its data over HTTP', async () => {
    a = await new AgentProcess(['-dev']).ready();
    writeFileSync(join(dir, 'data.nomad.hcl'), JOB);
    const run = await a.cli(['job', 'run', join(dir, 'data.nomad.hcl')]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    const prev = (await a.req('GET', '/v1/job/data/allocations')).json[0];
    await waitFor(a, `/v1/client/fs/stat/${prev.ID}?path=alloc/data/kept`, (s) => s.Size > 0, 'the data written');

    // B: a berth client on another "node", asking A's API.
    const rpc = new NomadHttpRPC({ address: a.url, waitMs: 20_000 });
    const none = await rpc.getAlloc({ allocId: randomUUID(), minQueryIndex: 0, allowStale: true }, AbortSignal.timeout(5000));
    expect(none.alloc).to.equal(null);
    const nodeA = (await rpc.getNode({ nodeId: prev.NodeID }, AbortSignal.timeout(5000))).node!;
    expect(nodeA.httpAddr).to.equal(new URL(a.url).host);

    const b = tempClient({ nodeId: 'node-b', rpc, retry: { baseMs: 50, staggerMs: 0 } });
    const full = (await a.req('GET', `/v1/allocation/${prev.ID}`)).json;
    const replacement = {
      ...(await rpc.getAlloc({ allocId: prev.ID, minQueryIndex: 0, allowStale: true }, AbortSignal.timeout(5000))).alloc!,
      id: randomUUID(),
      nodeId: 'node-b',
      name: full.Name,
      previousAllocation: prev.ID,
      desiredStatus: 'run' as const,
      clientStatus: 'pending' as const,
      taskStates: undefined,
      allocModifyIndex: 1,
    };
    delete replacement.taskStates;
    const waiting = nextMessage(b, 'watcher.waiting', (m) => m.watchedAllocId === prev.ID);
    const migrated = nextMessage(b, 'migration.done');
    const runner = b.addAlloc(replacement);
    const w = await waiting;
    expect([w.mode, w.role]).to.deep.equal(['remote', 'previous']);
    expect(runner.isWaiting()).to.equal(true);

    // Stop the job on A: the remote watcher sees it through its blocking query and lets go.
    await a.req('DELETE', '/v1/job/data');
    const done = await migrated;
    expect(done.mode).to.equal('remote');
    await runner.waitFor('running');
    expect(readFileSync(join(runner.allocDir.dir, 'alloc', 'data', 'kept'), 'utf8')).to.equal('precious\n');
  });

  it("checks per-alloc migrate tokens with ACLs on: B migrates with its alloc's token, not the client's static one", async () => {
    const cfg = join(dir, 'acl.hcl');
    writeFileSync(cfg, 'acl {\n  enabled = true\n}\n');
    const dataDir = join(dir, 'a-data');
    a = await new AgentProcess(['-dev', '-config', cfg, '-data-dir', dataDir]).ready();
    writeFileSync(join(dir, 'data.nomad.hcl'), JOB);
    expect((await a.cli(['job', 'run', join(dir, 'data.nomad.hcl')])).code).to.equal(0);
    const prev = (await a.req('GET', '/v1/job/data/allocations')).json[0];
    await waitFor(a, `/v1/client/fs/stat/${prev.ID}?path=alloc/data/kept`, (s) => s.Size > 0, 'the data written');

    const anonymous = new NomadHttpRPC({ address: a.url });
    const err = await anonymous.getAlloc({ allocId: prev.ID, minQueryIndex: 0, allowStale: true }, AbortSignal.timeout(5000)).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(PermissionDeniedError);
    const withToken = new NomadHttpRPC({ address: a.url, token: a.token!, waitMs: 20_000 });
    expect((await withToken.getAlloc({ allocId: prev.ID, minQueryIndex: 0, allowStale: true }, AbortSignal.timeout(5000))).alloc!.id).to.equal(prev.ID);

    // What a server placing B's alloc would hand out with it: the HMAC of the previous alloc's id
    // under its node's secret (read from A's store; the API never shows the secret).
    const node = (await a.req('GET', `/v1/node/${prev.NodeID}`)).json;
    expect(node).not.to.have.property('SecretID');
    const db = new Database(join(dataDir, 'server', 'state.db'), { readonly: true });
    const secret = (JSON.parse((db.prepare("SELECT json FROM objects WHERE kind = 'node'").get() as { json: string }).json) as { secretId: string }).secretId;
    db.close();
    const right = migrateTokenFor(secret, prev.ID);

    // The snapshot route: the alloc's own migrate token opens it; a wrong one, another alloc's,
    // or one made with another node's secret does not.
    const snap = (token: string) => http('GET', `${a!.url}/v1/client/allocation/${prev.ID}/snapshot`, undefined, { headers: { 'X-Nomad-Token': token } });
    expect((await snap('wrong')).status).to.equal(403);
    expect((await snap(migrateTokenFor(secret, randomUUID()))).status).to.equal(403);
    expect((await snap(migrateTokenFor('another-secret', prev.ID))).status).to.equal(403);
    const ok = await snap(right);
    expect(ok.status).to.equal(200);
    expect(ok.headers['content-type']).to.match(/tar/);

    // B: its client's static token is wrong on purpose; the alloc's own token is what it sends.
    const b = tempClient({ nodeId: 'node-b', rpc: withToken, migrateToken: 'not-the-one-to-use', retry: { baseMs: 50, staggerMs: 0 } });
    const full = (await a.req('GET', `/v1/allocation/${prev.ID}`)).json;
    const replacement = {
      ...(await withToken.getAlloc({ allocId: prev.ID, minQueryIndex: 0, allowStale: true }, AbortSignal.timeout(5000))).alloc!,
      id: randomUUID(),
      nodeId: 'node-b',
      name: full.Name,
      previousAllocation: prev.ID,
      migrateToken: right,
      desiredStatus: 'run' as const,
      clientStatus: 'pending' as const,
      allocModifyIndex: 1,
    };
    delete replacement.taskStates;
    const migrated = nextMessage(b, 'migration.done');
    const failed = nextMessage(b, 'migration.failed').then((m) => {
      throw new Error(`migration failed: ${JSON.stringify(m)}`);
    });
    const runner = b.addAlloc(replacement);
    await a.req('DELETE', '/v1/job/data');
    const done = await Promise.race([migrated, failed]);
    expect(done.mode).to.equal('remote');
    await runner.waitFor('running');
    expect(readFileSync(join(runner.allocDir.dir, 'alloc', 'data', 'kept'), 'utf8')).to.equal('precious\n');
  });
});
