import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDockerDriver } from '../../../actors/drivers/docker/docker-driver.ts';
import { engine, importBusybox } from '../../support/docker.ts';
import { containerName, LABEL_ALLOC_ID, memoryLimits } from '../../../actors/drivers/docker/container-spec.ts';
import type { TaskConfig } from '../../../actors/drivers/driver.ts';
import { DriverConfigError } from '../../../model/errors.ts';
import { realClock } from '../../../model/clock.ts';
import { skipOrFailInCi } from '../../support/skips.ts';
import { ABORT, cleanup, sandbox, startTracked } from './support/helpers.ts';

const IMAGE = 'berth-spec-busybox:1';

describe('docker driver', function () {
  this.timeout(30_000);
  afterEach(cleanup);

  it('fingerprint: an endpoint where no Engine answers is undetected, not an error', async () => {
    const d = createDockerDriver({ plugin: { endpoint: `unix://${path.join(os.tmpdir(), 'berth-no-docker.sock')}` } });
    const fp = await d.fingerprint();
    expect(fp).to.deep.equal({ detected: false, healthy: false, healthDescription: 'Docker is not available', attributes: {} });
    await d.shutdown();
  });

  it('refuses unknown keys and interactive/tty by name', () => {
    const d = createDockerDriver();
    expect(() => d.validateConfig({ name: 't', driver: 'docker', config: { image: 'x', imagee: 1 } })).to.throw(DriverConfigError, /imagee/);
    expect(() => d.validateConfig({ name: 't', driver: 'docker', config: { image: 'x', tty: true } })).to.throw(DriverConfigError, /tty is not supported/);
    expect(() => d.validateConfig({ name: 't', driver: 'docker', config: {} })).to.throw(DriverConfigError, /missing required config "image"/);
  });

  it("memory: memory alone is the limit; with memory_max the reservation; memory_max = -1 no limit at all (Nomad's MemoryNoLimit)", () => {
    const MiB = 1024 * 1024;
    const of = (resources: TaskConfig['task']['resources']) => memoryLimits({ task: { name: 't', driver: 'docker', config: {}, resources } } as TaskConfig);
    expect(of({ memoryMB: 100 })).to.deep.equal({ limit: 100 * MiB, reservation: 0 });
    expect(of({ memoryMB: 100, memoryMaxMB: 200 })).to.deep.equal({ limit: 200 * MiB, reservation: 100 * MiB });
    expect(of({ memoryMB: 100, memoryMaxMB: -1 })).to.deep.equal({ limit: 0, reservation: 100 * MiB });
  });

  describe('on a real Engine', () => {
    const driver = createDockerDriver();
    before(async function () {
      if (!(await driver.fingerprint()).detected) skipOrFailInCi(this, 'no Docker Engine answers at /var/run/docker.sock');
      await importBusybox('berth-spec-busybox', '1');
    });
    after(async () => {
      await driver.shutdown();
      await engine
        .getImage(IMAGE)
        .remove({ force: true })
        .catch(() => {});
    });

    it('runs a batch container named <task>-<alloc id> with berth labels, logs into the alloc files, reports the exit code', async () => {
      const sb = sandbox();
      const cfg = sb.config({
        driver: 'docker',
        config: { image: IMAGE, command: '/bin/sh', args: ['-c', 'echo hello-$NOMAD_TASK_NAME; echo oops >&2; exit 3'] },
      });
      cfg.env = { ...cfg.env, NOMAD_TASK_NAME: 'web' };
      const h = await startTracked(driver, cfg);
      const info = await engine.getContainer((h.state as { containerId: string }).containerId).inspect();
      expect(info.Name).to.equal(`/${containerName(cfg)}`);
      expect(info.Config.Labels[LABEL_ALLOC_ID]).to.equal('alloc-1');
      expect(info.HostConfig.Binds).to.include.members([
        `${cfg.allocDir.sharedDir}:/alloc`,
        `${cfg.taskDir.localDir}:/local`,
        `${cfg.taskDir.secretsDir}:/secrets`,
      ]);
      const r = await driver.wait(h, ABORT());
      expect(r.exitCode).to.equal(3);
      const text = (s: 'stdout' | 'stderr') => fs.readFileSync(path.join(sb.logsDir, `web.${s}.0`), 'utf8');
      expect(text('stdout')).to.equal('hello-web\n');
      expect(text('stderr')).to.equal('oops\n');
    });

    it('exec runs in the container with its exit code; stop ends a running one', async () => {
      const sb = sandbox();
      const h = await startTracked(driver, sb.config({ driver: 'docker', config: { image: IMAGE, command: '/bin/sleep', args: ['600'] } }));
      const r = await driver.exec!(h, ['/bin/sh', '-c', 'echo in; exit 4']);
      expect(r.exitCode).to.equal(4);
      expect(r.stdout.toString()).to.equal('in\n');
      await driver.stop(h, 100, 'SIGKILL');
      const exit = await driver.wait(h, ABORT());
      expect(exit.exitCode).to.equal(137);
    });

    it('a privileged task is refused when the plugin does not allow it, before any container exists', async () => {
      const sb = sandbox();
      const cfg = sb.config({ driver: 'docker', config: { image: IMAGE, privileged: true } });
      let err: unknown;
      try {
        await driver.start(cfg, ABORT());
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(DriverConfigError);
      expect((err as Error).message).to.match(/allow_privileged = false/);
      const left = await engine.listContainers({ all: true, filters: { name: [containerName(cfg)] } });
      expect(left).to.deep.equal([]);
    });
    it("removeDangling: a running berth container no alloc owns goes once older than creation_grace; a young or stopped one stays (Nomad's reconciler)", async () => {
      const orphan = 'a0000000-0000-4000-8000-00000000dead';
      const make = async (name: string, start: boolean) => {
        const c = await engine.createContainer({ name, Image: IMAGE, Cmd: ['sleep', '600'], Labels: { [LABEL_ALLOC_ID]: orphan } });
        if (start) await c.start();
        return c.id;
      };
      const running = await make(`berth-dangling-running-${process.pid}`, true);
      const stopped = await make(`berth-dangling-stopped-${process.pid}`, false);
      const exists = async (id: string) =>
        engine
          .getContainer(id)
          .inspect()
          .then(
            () => true,
            () => false,
          );
      try {
        // The default grace (5 m): a container created a moment ago may be another client's.
        const all = await engine.listContainers({ all: true, filters: { label: [LABEL_ALLOC_ID] } });
        expect(await driver.removeDangling(new Set(all.map((c) => c.Labels[LABEL_ALLOC_ID]!).filter((a) => a !== orphan)))).to.deep.equal([]);
        expect(await exists(running)).to.equal(true);
        // With no grace: owned by an alloc of this client, kept; owned by none, removed. Every other
        // berth container on this Engine (other specs', other agents') counts as owned here, so
        // the sweep cannot touch them.
        const others = await engine.listContainers({ all: true, filters: { label: [LABEL_ALLOC_ID] } });
        const owned = new Set(others.map((c) => c.Labels[LABEL_ALLOC_ID]!).filter((a) => a !== orphan));
        const noGrace = createDockerDriver({
          plugin: { gc: { ...driver.plugin.gc, danglingCreationGraceMs: 0 } },
          clock: { ...realClock, now: () => Date.now() + 2000 },
        });
        try {
          expect(await noGrace.removeDangling(new Set([...owned, orphan]))).to.deep.equal([]);
          expect(await noGrace.removeDangling(owned)).to.deep.equal([running]);
        } finally {
          await noGrace.shutdown();
        }
        expect(await exists(running)).to.equal(false);
        expect(await exists(stopped), "a stopped container is the container GC's, not the reconciler's").to.equal(true);
      } finally {
        for (const id of [running, stopped])
          await engine
            .getContainer(id)
            .remove({ force: true })
            .catch(() => {});
      }
    });

    it('a start first removes a container of the same name an earlier run left', async () => {
      const sb = sandbox();
      const cfg = sb.config({ driver: 'docker', config: { image: IMAGE, command: '/bin/sh', args: ['-c', 'exit 0'] } });
      const left = await engine.createContainer({ name: containerName(cfg), Image: IMAGE, Cmd: ['sleep', '600'] });
      try {
        const h = await startTracked(driver, cfg);
        const id = (h.state as { containerId: string }).containerId;
        expect(id).to.not.equal(left.id);
        expect((await engine.getContainer(id).inspect()).Name).to.equal(`/${containerName(cfg)}`);
        const old = await engine
          .getContainer(left.id)
          .inspect()
          .then(
            () => 'still there',
            (e: { statusCode?: number }) => e.statusCode,
          );
        expect(old).to.equal(404);
        expect((await driver.wait(h, ABORT())).exitCode).to.equal(0);
      } finally {
        await engine
          .getContainer(left.id)
          .remove({ force: true })
          .catch(() => {});
      }
    });
  });
});
