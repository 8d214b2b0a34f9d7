import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { makeAlloc } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';
import type { Allocation, Task, TaskGroup } from '../../../model/types.ts';
import { AdvancingClock, freePort, serveDir } from './support.ts';

// Held periods (distinct, so each timer kind is driven on its own).
const CHECK_MS = 1000;
const MIN_HEALTHY_MS = 5000;
const DEADLINE_MS = 600_000;
const SHORT_DEADLINE_MS = 30_000;

/** A tiny service: answers /health with 200 ("ok") or 500 ("sick"), on NOMAD_PORT_http. */
const SERVER = `import http.server, os, sys
mode = sys.argv[1] if len(sys.argv) > 1 else 'ok'
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code = 200 if (self.path == '/health' and mode == 'ok') else 500
        self.send_response(code)
        self.end_headers()
        self.wfile.write(b'ok' if code == 200 else b'sick')
    def log_message(self, *a):
        pass
http.server.HTTPServer(('127.0.0.1', int(os.environ['NOMAD_PORT_http'])), H).serve_forever()
`;

describe('a service job on real processes: artifact, port, service, http check, health', function () {
  this.timeout(90_000);
  const newClient = useTempClients();
  let work: string;
  let served: Awaited<ReturnType<typeof serveDir>>;
  let sha256: string;

  before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'berth-svc-'));
    mkdirSync(path.join(work, 'src', 'bin'), { recursive: true });
    writeFileSync(path.join(work, 'src', 'bin', 'server.py'), SERVER, { mode: 0o755 });
    mkdirSync(path.join(work, 'www'));
    await tar.c({ gzip: true, file: path.join(work, 'www', 'app.tar.gz'), cwd: path.join(work, 'src') }, ['bin']);
    sha256 = createHash('sha256')
      .update(readFileSync(path.join(work, 'www', 'app.tar.gz')))
      .digest('hex');
    served = await serveDir(path.join(work, 'www'));
  });
  after(async () => {
    await served?.close();
    rmSync(work, { recursive: true, force: true });
  });

  async function serviceAlloc(opts: {
    mode?: 'ok' | 'sick';
    checksum?: string;
    checkRestart?: boolean;
    deadlineMs?: number;
    attempts?: number;
  }): Promise<Allocation> {
    const port = await freePort();
    const task: Task = {
      name: 'server',
      driver: 'raw_exec',
      config: { command: 'python3', args: ['local/bin/server.py', opts.mode ?? 'ok'] },
      killTimeoutMs: 1000,
      artifacts: [{ source: `${served.url}/app.tar.gz`, options: { checksum: `sha256:${opts.checksum ?? sha256}` } }],
      services: [
        {
          name: 'web',
          portLabel: 'http',
          tags: ['v1', '${NOMAD_JOB_ID}'],
          checks: [
            {
              name: 'web-health',
              type: 'http',
              path: '/health',
              intervalMs: CHECK_MS,
              timeoutMs: 2000,
              ...(opts.checkRestart ? { checkRestart: { limit: 2, graceMs: 0, ignoreWarnings: false } } : {}),
            },
          ],
        },
      ],
    };
    const group: Partial<TaskGroup> = {
      networks: [{ mode: 'host', reservedPorts: [], dynamicPorts: [{ label: 'http' }] }],
      restartPolicy: { attempts: opts.attempts ?? 5, intervalMs: 3_600_000, delayMs: 0, mode: 'fail' },
      update: {
        maxParallel: 1,
        healthCheck: 'checks',
        minHealthyTimeMs: MIN_HEALTHY_MS,
        healthyDeadlineMs: opts.deadlineMs ?? DEADLINE_MS,
        progressDeadlineMs: 3_600_000,
        autoRevert: false,
        autoPromote: false,
        canary: 0,
        staggerMs: 30_000,
      },
    };
    return makeAlloc([task], {
      group,
      deploymentId: 'd-1',
      allocatedResources: { tasks: {}, shared: { diskMB: 300, ports: [{ label: 'http', value: port, to: 0, hostIp: '127.0.0.1' }] } },
    });
  }

  /** Polls `done` (every 20 ms of real time), calling `tick` between polls; fails after `rounds`. */
  async function eventually(what: string, done: () => boolean, tick: () => void = () => undefined, rounds = 500): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      if (done()) return;
      tick();
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('fetches and checks its artifact, listens on its dynamic port, registers, passes its check, turns healthy after min_healthy_time', async () => {
    const clock = new AdvancingClock(new Set([CHECK_MS, MIN_HEALTHY_MS, DEADLINE_MS]));
    const client = newClient({ clock });
    const checks = record(client, 'check.status');
    const health = record(client, 'alloc.health');
    const updates: Allocation[] = [];
    const sub = client.updates$.subscribe((a) => updates.push(a));
    const alloc = await serviceAlloc({});
    const port = alloc.allocatedResources!.shared.ports[0]!.value;
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates?.server?.state === 'running');
    const events = r.alloc().taskStates!.server!.events.map((e) => e.type);
    expect(events).to.include.members(['Downloading Artifacts', 'Started']);
    expect(events.indexOf('Downloading Artifacts')).to.be.lessThan(events.indexOf('Started'));
    // The service is in the catalog with the port the scheduler gave the alloc.
    const [reg] = client.services();
    expect(reg).to.include({ serviceName: 'web', address: '127.0.0.1', port, allocId: r.allocId, jobId: 'example', namespace: 'default' });
    expect(reg!.tags).to.deep.equal(['v1', 'example']); // interpolated from the task's environment
    // The check passes once the server (from the artifact) listens on NOMAD_PORT_http.
    const passing = () => checks.items.some((m) => m.allocId === r.allocId && m.status === 'passing');
    await eventually('a passing check', passing, () => clock.advance(CHECK_MS));
    const ok = checks.items.find((m) => m.status === 'passing')!;
    expect(ok).to.include({ task: 'server', service: 'web', check: 'web-health' });
    expect(ok.output).to.match(new RegExp(`^HTTP GET http://127\\.0\\.0\\.1:${port}/health: 200 OK Output: ok$`));
    expect(health.items).to.have.length(0); // not before min_healthy_time
    await eventually(
      'the health verdict',
      () => health.items.length > 0,
      () => clock.advance(MIN_HEALTHY_MS),
    );
    expect(health.items[0]).to.include({ allocId: r.allocId, healthy: true, reason: '' });
    expect(r.alloc().deploymentStatus?.healthy).to.equal(true);
    expect(updates.at(-1)?.deploymentStatus?.healthy).to.equal(true);
    // Set once: no health timer is left, and a further passing round changes nothing.
    expect(clock.pending(MIN_HEALTHY_MS), 'min_healthy_time timer left').to.equal(0);
    expect(clock.pending(DEADLINE_MS), 'healthy_deadline timer left').to.equal(0);
    const rounds = checks.items.length;
    clock.advance(MIN_HEALTHY_MS);
    await eventually(
      'another passing round',
      () => checks.items.length > rounds,
      () => clock.advance(CHECK_MS),
    );
    expect(health.items).to.have.length(1);
    // Deregistered before the kill: gone from the catalog once the alloc is stopped.
    await r.destroy();
    expect(client.services()).to.deep.equal([]);
    expect(clock.pending(), 'no held timer left behind').to.equal(0);
    sub.unsubscribe();
    expect(served.requests.filter((q) => q.path === '/app.tar.gz')).to.have.length.greaterThan(0);
  });

  it('a wrong checksum fails with "Failed Artifact Download" and the restart policy decides (here: one retry, then failed)', async () => {
    const clock = new AdvancingClock(new Set([CHECK_MS, MIN_HEALTHY_MS, DEADLINE_MS]));
    const client = newClient({ clock });
    const health = record(client, 'alloc.health');
    const before = served.requests.length;
    const r = client.addAlloc(await serviceAlloc({ checksum: '0'.repeat(64), attempts: 1 }));
    await viewWhere(client, r, (a) => a.taskStates?.server?.state === 'dead');
    const st = r.alloc().taskStates!.server!;
    expect(st.failed).to.equal(true);
    const failures = st.events.filter((e) => e.type === 'Failed Artifact Download');
    expect(failures).to.have.length(2);
    expect(failures[0]!.displayMessage).to.equal(
      `failed to download artifact "${served.url}/app.tar.gz": checksums did not match for app.tar.gz: expected ${'0'.repeat(64)}, got ${sha256} (sha256)`,
    );
    expect(st.events.map((e) => e.type)).to.include.members(['Restarting', 'Not Restarting']);
    expect(st.events.some((e) => e.type === 'Started')).to.equal(false);
    expect(served.requests.length - before).to.equal(2); // fetched again on the retry
    // Nothing of the artifact was written into the task dir.
    expect(() => readFileSync(path.join(r.allocDir.dir, 'server', 'local', 'bin', 'server.py'))).to.throw();
    await viewWhere(client, r, (a) => a.deploymentStatus?.healthy === false);
    expect(health.items[0]).to.include({ healthy: false, reason: 'Unhealthy because of failed task' });
    expect(r.alloc().taskStates!.server!.events.at(-1)).to.include({ type: 'Alloc Unhealthy', displayMessage: 'Unhealthy because of failed task' });
  });

  it('a critical check restarts its task through check_restart after grace, and the alloc is unhealthy at healthy_deadline', async () => {
    const clock = new AdvancingClock(new Set([CHECK_MS, MIN_HEALTHY_MS, SHORT_DEADLINE_MS]));
    const client = newClient({ clock });
    const checks = record(client, 'check.status');
    const health = record(client, 'alloc.health');
    const r = client.addAlloc(await serviceAlloc({ mode: 'sick', checkRestart: true, deadlineMs: SHORT_DEADLINE_MS }));
    await viewWhere(client, r, (a) => a.taskStates?.server?.state === 'running');
    const signaled = () => r.alloc().taskStates!.server!.events.find((e) => e.type === 'Restart Signaled');
    await eventually(
      'a check_restart',
      () => !!signaled(),
      () => clock.advance(CHECK_MS),
    );
    expect(signaled()!.details.restart_reason).to.equal('healthcheck: check "web-health" unhealthy');
    expect(
      checks.items.some((m) => m.status === 'critical' && /500 Internal Server Error Output: sick|connection refused|ECONNREFUSED/.test(m.output)),
    ).to.equal(true);
    // A failure for the restart policy: a "Restarting" decision, counted.
    await viewWhere(client, r, (a) => (a.taskStates?.server?.restarts ?? 0) >= 1);
    expect(r.alloc().taskStates!.server!.events.some((e) => e.type === 'Restarting')).to.equal(true);
    expect(health.items).to.have.length(0);
    // Running again, its check still critical when the deadline passes.
    await viewWhere(client, r, (a) => a.taskStates?.server?.state === 'running');
    clock.advance(SHORT_DEADLINE_MS);
    await eventually('the health verdict', () => health.items.length > 0);
    expect(health.items[0]!.healthy, JSON.stringify(health.items[0])).to.equal(false);
    expect(health.items[0]!.reason).to.equal('Services not healthy by deadline: web');
    await viewWhere(client, r, (a) => a.taskStates!.server!.events.some((e) => e.type === 'Alloc Unhealthy'));
    expect(r.alloc().deploymentStatus?.healthy).to.equal(false);
  });

  it("a stopping alloc's health is not decided: its deadline passes with no verdict", async () => {
    const clock = new AdvancingClock(new Set([CHECK_MS, MIN_HEALTHY_MS, SHORT_DEADLINE_MS]));
    const client = newClient({ clock });
    const health = record(client, 'alloc.health');
    const alloc = await serviceAlloc({ mode: 'sick', deadlineMs: SHORT_DEADLINE_MS });
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates?.server?.state === 'running');
    client.updateAlloc({ ...r.alloc(), desiredStatus: 'stop', allocModifyIndex: alloc.allocModifyIndex + 1 });
    await viewWhere(client, r, (a) => a.clientStatus === 'complete');
    expect(clock.pending(SHORT_DEADLINE_MS), 'no healthy_deadline timer left').to.equal(0);
    clock.advance(SHORT_DEADLINE_MS);
    expect(health.items).to.deep.equal([]);
    expect(r.alloc().deploymentStatus?.healthy).to.equal(undefined);
  });
});
