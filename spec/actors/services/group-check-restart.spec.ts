/**
 * Issue #36: a group service's check_restart, as Nomad runs it. Nomad's group service hook hands
 * its check watcher the alloc runner as the restarter, so a group check that stays critical past
 * its grace restarts every running task of the alloc (each a failure for its restart policy),
 * with or without a `task` on the check. A real http check against a loopback server that answers
 * 500; check rounds driven by a held clock.
 */
import { expect } from 'chai';
import http from 'node:http';
import type net from 'node:net';
import { makeAlloc } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';
import type { Allocation, ServiceCheck } from '../../../model/types.ts';
import { AdvancingClock } from './support.ts';

const CHECK_MS = 1000;

describe('group services: check_restart restarts the running tasks, as Nomad does', function () {
  this.timeout(60_000);
  const newClient = useTempClients();
  let server: http.Server;
  let port: number;
  let hits = 0;

  before(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.writeHead(500).end('sick');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function eventually(what: string, done: () => boolean, tick: () => void): Promise<void> {
    for (let i = 0; i < 500; i++) {
      if (done()) return;
      tick();
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /** Two sleeping tasks and a group service on the loopback server's port, its http check with `check`'s extras. */
  const alloc = (check: Partial<ServiceCheck>): Allocation =>
    makeAlloc(
      ['a', 'b'].map((name) => ({ name, driver: 'raw_exec', config: { command: '/bin/sleep', args: ['30'] }, killTimeoutMs: 1000 })),
      {
        group: {
          restartPolicy: { attempts: 5, intervalMs: 3_600_000, delayMs: 0, mode: 'fail' },
          networks: [{ mode: 'host', reservedPorts: [], dynamicPorts: [{ label: 'http' }] }],
          services: [
            {
              name: 'grp',
              portLabel: 'http',
              checks: [
                {
                  name: 'grp-health',
                  type: 'http',
                  path: '/health',
                  intervalMs: CHECK_MS,
                  timeoutMs: 1000,
                  checkRestart: { limit: 2, graceMs: 2000, ignoreWarnings: false },
                  ...check,
                },
              ],
            },
          ],
        },
        allocatedResources: { tasks: {}, shared: { diskMB: 300, ports: [{ label: 'http', value: port, to: 0, hostIp: '127.0.0.1' }] } },
      },
    );

  for (const [what, check] of [
    ['no task on the check', {}],
    ['the check names task "a"', { task: 'a' }],
  ] as const) {
    it(`${what}: after the grace, two critical results restart both running tasks, each a failure`, async () => {
      const clock = new AdvancingClock(new Set([CHECK_MS]));
      const client = newClient({ clock });
      const r = client.addAlloc(alloc(check));
      await viewWhere(client, r, (a) => a.taskStates?.a?.state === 'running' && a.taskStates?.b?.state === 'running');
      const signaled = (t: string) => r.alloc().taskStates![t]!.events.find((e) => e.type === 'Restart Signaled');
      const before = hits;
      await eventually(
        'both tasks signaled',
        () => !!signaled('a') && !!signaled('b'),
        () => clock.advance(CHECK_MS),
      );
      expect(hits - before, 'the check really probed the server').to.be.greaterThan(1);
      for (const t of ['a', 'b']) expect(signaled(t)!.details.restart_reason, t).to.equal('healthcheck: check "grp-health" unhealthy');
      // Failures for the restart policy: each task counted a restart and runs again.
      await viewWhere(client, r, (a) => ['a', 'b'].every((t) => (a.taskStates?.[t]?.restarts ?? 0) >= 1 && a.taskStates?.[t]?.state === 'running'));
      for (const t of ['a', 'b'])
        expect(
          r.alloc().taskStates![t]!.events.some((e) => e.type === 'Restarting'),
          t,
        ).to.equal(true);
    });
  }

  it('within the grace nothing restarts', async () => {
    const clock = new AdvancingClock(new Set([CHECK_MS]));
    const client = newClient({ clock });
    const r = client.addAlloc(alloc({ checkRestart: { limit: 2, graceMs: 60_000, ignoreWarnings: false } }));
    await viewWhere(client, r, (a) => a.taskStates?.a?.state === 'running' && a.taskStates?.b?.state === 'running');
    const before = hits;
    await eventually(
      'five check rounds',
      () => hits - before >= 5,
      () => clock.advance(CHECK_MS),
    );
    for (const t of ['a', 'b'])
      expect(
        r.alloc().taskStates![t]!.events.some((e) => e.type === 'Restart Signaled'),
        t,
      ).to.equal(false);
  });
});
