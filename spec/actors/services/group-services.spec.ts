import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeAlloc } from '../../support/fixtures.ts';
import { record, useTempClients, viewWhere } from '../../support/temp-client.ts';
import type { Allocation } from '../../../model/types.ts';
import { AdvancingClock, freePort } from './support.ts';

const CHECK_MS = 1000;
const SHUTDOWN_DELAY_MS = 4000;

describe('group services: tcp and script checks, deregistered before the shutdown delay', function () {
  this.timeout(60_000);
  const newClient = useTempClients();

  async function eventually(what: string, done: () => boolean, tick: () => void = () => undefined): Promise<void> {
    for (let i = 0; i < 500; i++) {
      if (done()) return;
      tick();
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('registers the group service, runs a tcp check and a script check inside the task, and deregisters on stop', async () => {
    const clock = new AdvancingClock(new Set([CHECK_MS, SHUTDOWN_DELAY_MS]));
    const client = newClient({ clock });
    const checks = record(client, 'check.status');
    const port = await freePort();
    const alloc: Allocation = makeAlloc(
      [
        {
          name: 'main',
          driver: 'raw_exec',
          config: { command: '/bin/sh', args: ['-c', 'exec python3 -m http.server "$NOMAD_PORT_http" --bind 127.0.0.1'] },
          killTimeoutMs: 1000,
        },
      ],
      {
        group: {
          shutdownDelayMs: SHUTDOWN_DELAY_MS,
          networks: [{ mode: 'host', reservedPorts: [], dynamicPorts: [{ label: 'http' }] }],
          services: [
            {
              name: 'grp',
              portLabel: 'http',
              checks: [
                { name: 'tcp', type: 'tcp', intervalMs: CHECK_MS, timeoutMs: 1000 },
                {
                  name: 'script',
                  type: 'script',
                  task: 'main',
                  command: '/bin/sh',
                  args: ['-c', 'cat local/status 2>/dev/null || echo not ready; exit $(cat local/code 2>/dev/null || echo 2)'],
                  intervalMs: CHECK_MS,
                  timeoutMs: 2000,
                },
              ],
            },
          ],
        },
        allocatedResources: { tasks: {}, shared: { diskMB: 300, ports: [{ label: 'http', value: port, to: 0, hostIp: '127.0.0.1' }] } },
      },
    );
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates?.main?.state === 'running');
    expect(client.services().map((s) => [s.id, s.serviceName, s.port])).to.deep.equal([[`_nomad-task-${r.allocId}-group-web-grp-http`, 'grp', port]]);
    const last = (name: string) => checks.items.filter((m) => m.check === name).at(-1);
    await eventually(
      'tcp passing',
      () => last('tcp')?.status === 'passing',
      () => clock.advance(CHECK_MS),
    );
    expect(last('tcp')!.output).to.equal(`TCP connect 127.0.0.1:${port}: Success`);
    await eventually(
      'a script result',
      () => last('script')?.output === 'not ready\n',
      () => clock.advance(CHECK_MS),
    );
    expect(last('script')).to.include({ status: 'critical', task: 'main', service: 'grp' });
    writeFileSync(path.join(r.allocDir.dir, 'main', 'local', 'status'), 'degraded');
    writeFileSync(path.join(r.allocDir.dir, 'main', 'local', 'code'), '1');
    await eventually(
      'a warning',
      () => last('script')?.status === 'warning',
      () => clock.advance(CHECK_MS),
    );
    writeFileSync(path.join(r.allocDir.dir, 'main', 'local', 'code'), '0');
    await eventually(
      'a passing script',
      () => last('script')?.status === 'passing',
      () => clock.advance(CHECK_MS),
    );
    expect(last('script')!.output).to.equal('degraded');

    // Stop: the service leaves the catalog while the task still runs out the group's shutdown delay.
    client.updateAlloc({ ...alloc, desiredStatus: 'stop', allocModifyIndex: 2 });
    await eventually('deregistration', () => client.services().length === 0);
    expect(r.alloc().taskStates!.main!.state).to.equal('running');
    // No check timer is left to fire, and none has reported by the time the task is dead.
    expect(clock.pending(CHECK_MS), 'check timers left after deregistration').to.equal(0);
    const seen = checks.items.length;
    clock.advance(CHECK_MS * 3);
    clock.advance(SHUTDOWN_DELAY_MS);
    await viewWhere(client, r, (a) => a.taskStates?.main?.state === 'dead');
    expect(checks.items.length, 'no check runs after deregistration').to.equal(seen);
  });

  it("interpolates a group service's name, tags, port label and address from the alloc's environment (no task variables)", async () => {
    const client = newClient({ clock: new AdvancingClock(new Set()) });
    const port = await freePort();
    const alloc: Allocation = makeAlloc([{ name: 'main', driver: 'raw_exec', config: { command: '/bin/sleep', args: ['30'] }, killTimeoutMs: 1000 }], {
      group: {
        meta: { tier: 'gold', portName: 'http' },
        networks: [{ mode: 'host', reservedPorts: [], dynamicPorts: [{ label: 'http' }] }],
        services: [
          {
            name: '${NOMAD_JOB_ID}-${NOMAD_GROUP_NAME}',
            portLabel: '${NOMAD_META_portName}',
            address: '${NOMAD_IP_http}',
            tags: ['alloc-${NOMAD_ALLOC_INDEX}', '${NOMAD_META_tier}', 'task-${NOMAD_TASK_NAME}'],
          },
        ],
      },
      allocatedResources: { tasks: {}, shared: { diskMB: 300, ports: [{ label: 'http', value: port, to: 0, hostIp: '127.0.0.2' }] } },
    });
    const r = client.addAlloc(alloc);
    await viewWhere(client, r, (a) => a.taskStates?.main?.state === 'running');
    const [reg] = client.services();
    expect([reg!.serviceName, reg!.address, reg!.port]).to.deep.equal([`${alloc.jobId}-web`, '127.0.0.2', port]);
    // A group service has no task: ${NOMAD_TASK_NAME} stays as written, as in Nomad.
    expect(reg!.tags).to.deep.equal(['alloc-0', 'gold', 'task-${NOMAD_TASK_NAME}']);
    client.updateAlloc({ ...alloc, desiredStatus: 'stop', allocModifyIndex: 2 });
    await viewWhere(client, r, (a) => a.taskStates?.main?.state === 'dead');
  });
});
