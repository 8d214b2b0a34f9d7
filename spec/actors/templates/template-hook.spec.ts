/**
 * The template hook on real processes (raw_exec), with variables from a source on the far side
 * of the client's boundary (in memory here; the agent serves its encrypted store the same way):
 * a template reading `nomadVar` renders before the task starts; a change re-renders it and
 * restarts the task (`change_mode = "restart"`), signals it (`signal`) or runs a script in it
 * (`script`); `env = true` sets env; a missing variable blocks the task in prestart with Nomad's
 * event and unblocks when put; another job's variable is refused; `nomadService` lists another
 * alloc's service and re-renders when it goes.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Allocation, Task, TaskTemplate } from '../../../model/types.ts';
import { createClient } from '../../../index.ts';
import { TEMPLATE_RESTART_REASON, TEMPLATE_SIGNAL_MESSAGE } from '../../../machines/policy/template-change.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { until } from '../../support/migrate-helpers.ts';
import { MemoryVariables } from '../../support/memory-variables.ts';
import { useTempClients } from '../../support/temp-client.ts';
import { AdvancingClock } from '../services/support.ts';

const OWN = 'nomad/jobs/example/web/t';
const read = (vars: string) => `{{ with nomadVar "${vars}" }}user={{ .user }}{{ end }}\n`;

function templateAlloc(template: Partial<TaskTemplate>, script: string, jobType: 'service' | 'batch' = 'service'): Allocation {
  const task: Task = {
    name: 't',
    driver: 'raw_exec',
    config: { command: '/bin/sh', args: ['-c', script] },
    killTimeoutMs: 500,
    templates: [{ destination: 'local/app.conf', ...template }],
  };
  return makeAlloc([task], { jobType, group: { restartPolicy: { attempts: 2, intervalMs: 600_000, delayMs: 0, mode: 'fail' } } });
}

describe('template hook: variables and services, re-rendered while the task runs', function () {
  this.timeout(60_000);
  const newClient = useTempClients();

  const setup = (alloc: Allocation) => {
    const vars = new MemoryVariables();
    const client = newClient({ variables: vars });
    const runner = client.addAlloc(alloc);
    const allocDir = join(client.dataDir, 'alloc', alloc.id);
    const seen = () => (existsSync(join(allocDir, 'alloc', 'seen')) ? readFileSync(join(allocDir, 'alloc', 'seen'), 'utf8') : '');
    const events = () => runner.alloc().taskStates?.t?.events ?? [];
    return { vars, client, runner, allocDir, seen, events };
  };

  it('renders a variable before the task starts; a change re-renders the file and restarts the task', async () => {
    const alloc = templateAlloc({ data: read(OWN) }, 'cat local/app.conf >> "$NOMAD_ALLOC_DIR/seen"; exec sleep 1000');
    const vars = new MemoryVariables();
    vars.put(OWN, { user: 'ada' });
    const client = newClient({ variables: vars });
    const runner = client.addAlloc(alloc);
    const seenFile = join(client.dataDir, 'alloc', alloc.id, 'alloc', 'seen');
    await until(() => existsSync(seenFile) && readFileSync(seenFile, 'utf8') === 'user=ada\n', 10_000, 'the first start');
    vars.put(OWN, { user: 'bob' });
    await until(() => readFileSync(seenFile, 'utf8') === 'user=ada\nuser=bob\n', 10_000, 'the restart with the new value');
    const t = runner.alloc().taskStates!.t!;
    expect(t.restarts).to.equal(1);
    const restart = t.events.find((e) => e.type === 'Restart Signaled');
    expect(restart?.details.restart_reason).to.equal(TEMPLATE_RESTART_REASON);
    expect(readFileSync(join(client.dataDir, 'alloc', alloc.id, 't', 'local', 'app.conf'), 'utf8')).to.equal('user=bob\n');
    // The same value again: no re-render, no restart.
    vars.put(OWN, { user: 'bob' });
    await until(() => vars.waiting === 1, 5000, 'the watch to ask again');
    expect(runner.alloc().taskStates!.t!.restarts).to.equal(1);
  });

  it('splay: the restart waits a random part of splay, on the client clock', async () => {
    const SPLAY_MS = 10_000;
    const clock = new AdvancingClock(new Set([SPLAY_MS / 2]));
    const vars = new MemoryVariables();
    vars.put(OWN, { user: 'ada' });
    const client = newClient({ variables: vars, clock, random: () => 0.5 });
    const alloc = templateAlloc({ data: read(OWN), splayMs: SPLAY_MS }, 'cat local/app.conf >> "$NOMAD_ALLOC_DIR/seen"; exec sleep 1000');
    const runner = client.addAlloc(alloc);
    const seenFile = join(client.dataDir, 'alloc', alloc.id, 'alloc', 'seen');
    await until(() => existsSync(seenFile) && readFileSync(seenFile, 'utf8') === 'user=ada\n', 10_000, 'the first start');
    vars.put(OWN, { user: 'bob' });
    await until(() => clock.pending(SPLAY_MS / 2) === 1, 10_000, 'the splay wait');
    expect(runner.alloc().taskStates!.t!.restarts).to.equal(0);
    clock.advance(SPLAY_MS / 2);
    await until(() => readFileSync(seenFile, 'utf8') === 'user=ada\nuser=bob\n', 10_000, 'the restart after the splay');
  });

  it('change_mode = "signal" sends change_signal and does not restart', async () => {
    const script = `trap 'cat local/app.conf >> "$NOMAD_ALLOC_DIR/seen"' HUP; cat local/app.conf >> "$NOMAD_ALLOC_DIR/seen"; while :; do sleep 0.05; done`;
    const { vars, client, runner, seen, events } = setup(templateAlloc({ data: read(OWN), changeMode: 'signal', changeSignal: 'SIGHUP' }, script));
    vars.put(OWN, { user: 'ada' });
    await until(() => seen() === 'user=ada\n', 10_000, 'the first start');
    vars.put(OWN, { user: 'eve' });
    await until(() => seen() === 'user=ada\nuser=eve\n', 10_000, 'the signal');
    expect(runner.alloc().taskStates!.t!.restarts).to.equal(0);
    const sig = events().find((e) => e.type === 'Signaling');
    expect(sig?.displayMessage).to.equal(TEMPLATE_SIGNAL_MESSAGE);
    expect(sig?.details.task_signal).to.equal('SIGHUP');
    expect(client.runners()).to.have.length(1);
  });

  it('change_mode = "script" runs change_script inside the task and says so', async () => {
    const { vars, seen, events } = setup(
      templateAlloc(
        { data: read(OWN), changeMode: 'script', changeScript: { command: '/bin/sh', args: ['-c', 'cat local/app.conf >> ../alloc/seen'] } },
        'cat local/app.conf >> "$NOMAD_ALLOC_DIR/seen"; exec sleep 1000',
      ),
    );
    vars.put(OWN, { user: 'ada' });
    await until(() => seen() === 'user=ada\n', 10_000, 'the first start');
    vars.put(OWN, { user: 'kim' });
    await until(() => seen() === 'user=ada\nuser=kim\n', 10_000, 'the script');
    await until(() => events().some((e) => /Template successfully ran script \/bin\/sh/.test(e.displayMessage)), 5000, 'the script event');
  });

  it('env = true sets the task env; destinations interpolate the task variables (host paths or /local under the task dir)', async () => {
    const alloc = templateAlloc(
      { data: '{{ with nomadVar "nomad/jobs/example" }}PASS={{ .pass }}{{ end }}\n', destination: '${NOMAD_SECRETS_DIR}/app.env', env: true },
      'echo "pass=$PASS" > "$NOMAD_ALLOC_DIR/seen"; cat local/b.txt ../alloc/shared.txt >> "$NOMAD_ALLOC_DIR/seen"',
      'batch',
    );
    alloc.job.taskGroups[0]!.tasks[0]!.templates!.push(
      { data: 'b\n', destination: '/local/b.txt' },
      { data: 'shared\n', destination: '${NOMAD_ALLOC_DIR}/shared.txt' },
    );
    const { vars, seen, allocDir } = setup(alloc);
    vars.put('nomad/jobs/example', { pass: 's3cret' });
    await until(() => seen() === 'pass=s3cret\nb\nshared\n', 10_000, 'the task');
    expect(readFileSync(join(allocDir, 't', 'secrets', 'app.env'), 'utf8')).to.equal('PASS=s3cret\n');
  });

  it("a missing variable blocks the task in prestart with Nomad's event, and a put unblocks it", async () => {
    const { vars, runner, seen, events } = setup(templateAlloc({ data: read(OWN) }, 'cat local/app.conf >> "$NOMAD_ALLOC_DIR/seen"; exec sleep 1000'));
    await until(() => events().some((e) => e.type === 'Template'), 10_000, 'the Missing event');
    const missing = events().find((e) => e.type === 'Template')!;
    expect(missing.displayMessage).to.equal(`Missing: nomad.var.block(${OWN}@default.global)`);
    expect(runner.alloc().taskStates!.t!.state).to.equal('pending');
    expect(seen()).to.equal('');
    expect(vars.waiting).to.equal(1);
    vars.put(OWN, { user: 'zed' });
    await until(() => seen() === 'user=zed\n', 10_000, 'the start');
  });

  it("a task cannot read another job's variables: Template failed, Permission denied", async () => {
    const { vars, runner, seen } = setup(templateAlloc({ data: read('nomad/jobs/other') }, 'echo ran > "$NOMAD_ALLOC_DIR/seen"', 'batch'));
    vars.put('nomad/jobs/other', { user: 'x' });
    await until(() => runner.alloc().taskStates?.t?.state === 'dead', 10_000, 'the task to fail');
    const t = runner.alloc().taskStates!.t!;
    expect(t.failed).to.equal(true);
    expect(t.events.map((e) => e.displayMessage).join('\n')).to.match(/Template failed: Permission denied: variable "nomad\/jobs\/other"/);
    expect(seen()).to.equal('');
  });

  it("nomadService lists another alloc's service and re-renders when it goes", async () => {
    const vars = new MemoryVariables();
    const client = newClient({ variables: vars });
    const db = makeAlloc(
      [
        {
          name: 'db',
          driver: 'raw_exec',
          config: { command: '/bin/sh', args: ['-c', 'exec sleep 1000'] },
          killTimeoutMs: 500,
          services: [{ name: 'db', tags: ['primary'] }],
        },
      ],
      { jobId: 'db' },
    );
    db.job = { ...db.job, id: 'db', name: 'db' };
    client.addAlloc(db);
    await until(() => client.services().some((s) => s.serviceName === 'db'), 10_000, 'the db service');
    const app = templateAlloc(
      { data: '{{ range nomadService "primary.db" }}{{ .Name }} {{ .Address }} {{ .JobID }}\n{{ end }}', changeMode: 'noop' },
      'exec sleep 1000',
    );
    const runner = client.addAlloc(app);
    const conf = join(client.dataDir, 'alloc', app.id, 't', 'local', 'app.conf');
    await until(() => existsSync(conf) && readFileSync(conf, 'utf8') === 'db 127.0.0.1 db\n', 10_000, 'the render');
    await client.destroyAlloc(db.id);
    await until(() => readFileSync(conf, 'utf8') === '', 10_000, 'the re-render without the instance');
    expect(runner.alloc().taskStates!.t!.restarts).to.equal(0);
    expect(runner.alloc().taskStates!.t!.state).to.equal('running');
  });

  it("a dispatched child reads its parent job's variables, as its workload identity is the parent's", async () => {
    const alloc = templateAlloc({ data: read('nomad/jobs/example') }, 'cat local/app.conf > "$NOMAD_ALLOC_DIR/seen"; exec sleep 1000');
    alloc.job = { ...alloc.job, id: 'example/dispatch-1700000000-abcd1234', parentId: 'example' };
    alloc.jobId = alloc.job.id;
    const { vars, runner, seen } = setup(alloc);
    vars.put('nomad/jobs/example', { user: 'parent' });
    await until(() => seen() === 'user=parent\n' && runner.alloc().taskStates?.t?.state === 'running', 10_000, "the start with the parent job's variable");
    expect(runner.alloc().taskStates!.t!.failed).to.equal(false);
  });

  it('a task reattached after its host restarts renders once, the same content, without a restart, and is watched again', async () => {
    const vars = new MemoryVariables();
    vars.put(OWN, { user: 'ada' });
    const first = newClient({ variables: vars });
    const alloc = templateAlloc({ data: read(OWN) }, 'cat local/app.conf >> "$NOMAD_ALLOC_DIR/seen"; exec sleep 1000');
    first.addAlloc(alloc);
    const allocDir = join(first.dataDir, 'alloc', alloc.id);
    const seen = () => (existsSync(join(allocDir, 'alloc', 'seen')) ? readFileSync(join(allocDir, 'alloc', 'seen'), 'utf8') : '');
    const conf = join(allocDir, 't', 'local', 'app.conf');
    await until(() => seen() === 'user=ada\n', 10_000, 'the first start');
    await first.shutdown();
    const again = createClient({ dataDir: first.dataDir, variables: vars });
    try {
      const [r] = await again.restore();
      await until(() => r!.alloc().taskStates?.t?.state === 'running' && vars.waiting === 1, 10_000, 'the reattached task watched again');
      expect([readFileSync(conf, 'utf8'), seen(), r!.alloc().taskStates!.t!.restarts]).to.deep.equal(['user=ada\n', 'user=ada\n', 0]);
      vars.put(OWN, { user: 'bob' });
      await until(() => seen() === 'user=ada\nuser=bob\n', 10_000, 'the restart with the new value');
    } finally {
      await Promise.allSettled(again.runners().map((x) => x.destroy()));
      await again.shutdown();
    }
  });
});
