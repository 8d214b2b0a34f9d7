/**
 * The plan's diff on a real agent over loopback: `PUT /v1/job/:id/plan` with `Diff: true`
 * answers Nomad's JobDiff for a changed job (contextual, as Nomad's plan always is; berth's
 * `Contextual: false` lists changes only; `Diff: false` none), and `berth job plan` prints it
 * as nomad would, compared whole against text written from nomad's printing rules.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';

const job = (o: { priority?: number; attempts?: string; args?: string; env?: string } = {}) => `job "example" {
  ${o.priority ? `priority = ${o.priority}` : ''}
  group "web" {
    ${o.attempts ? `restart {\n      attempts = ${o.attempts}\n    }` : ''}
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["${o.args ?? '1000'}"]
      }
      ${o.env ? `env {\n        MODE = "${o.env}"\n      }` : ''}
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;
const CHANGED = { priority: 60, attempts: '5', args: '2000', env: 'x' };

const f = (Type: string, Name: string, Old: string, New: string) => ({ Type, Name, Old, New, Annotations: null });

describe('agent: the plan’s job diff, over HTTP and in berth job plan', function () {
  this.timeout(120_000);
  let agent: AgentProcess;
  let dir: string;
  let jobModifyIndex: number;

  before(async function () {
    this.timeout(60_000);
    dir = mkdtempSync(join(tmpdir(), 'berth-plan-diff-'));
    writeFileSync(join(dir, 'example.nomad.hcl'), job());
    writeFileSync(join(dir, 'changed.nomad.hcl'), job(CHANGED));
    agent = await new AgentProcess(['-dev']).ready();
    const run = await agent.main(['job', 'run', '-detach', join(dir, 'example.nomad.hcl')]);
    expect(run.code, run.stderr).to.equal(0);
    await waitFor(agent, '/v1/job/example/allocations', (l: unknown[]) => l.length === 1, 'the alloc');
    jobModifyIndex = (await agent.req('GET', '/v1/job/example')).json.JobModifyIndex;
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
    rmSync(dir, { recursive: true, force: true });
  });

  async function changedJob(): Promise<unknown> {
    const parsed = await agent.req('POST', '/v1/jobs/parse', { JobHCL: job(CHANGED), Canonicalize: true });
    expect(parsed.status).to.equal(200);
    return parsed.json;
  }

  it('PUT /v1/job/:id/plan with Diff: true answers Nomad’s JobDiff, annotated with the plan', async () => {
    const r = await agent.req('PUT', '/v1/job/example/plan', { Job: await changedJob(), Diff: true });
    expect(r.status, JSON.stringify(r.json)).to.equal(200);
    expect(r.json.Diff).to.deep.equal({
      Type: 'Edited',
      ID: 'example',
      Fields: [f('Edited', 'Priority', '50', '60')],
      Objects: null,
      TaskGroups: [
        {
          Type: 'Edited',
          Name: 'web',
          Fields: null,
          Objects: [
            {
              Type: 'Edited',
              Name: 'RestartPolicy',
              Fields: [
                f('Edited', 'Attempts', '2', '5'),
                f('None', 'Delay', '15000000000', '15000000000'),
                f('None', 'Interval', '1800000000000', '1800000000000'),
                f('None', 'Mode', 'fail', 'fail'),
                f('None', 'RenderTemplates', 'false', 'false'),
              ],
              Objects: null,
            },
          ],
          Tasks: [
            {
              Type: 'Edited',
              Name: 'server',
              Fields: [f('Added', 'Env[MODE]', '', 'x')],
              Objects: [
                {
                  Type: 'Edited',
                  Name: 'Config',
                  Fields: [f('Edited', 'args[0]', '1000', '2000'), f('None', 'command', '/bin/sleep', '/bin/sleep')],
                  Objects: null,
                },
              ],
              Annotations: ['forces create/destroy update'],
            },
          ],
          Updates: { 'create/destroy update': 1 },
        },
      ],
    });
    expect(r.json.Annotations.DesiredTGUpdates.web.DestructiveUpdate).to.equal(1);
  });

  it('Contextual: false lists the changes only; Diff: false (or left out) answers Diff: null', async () => {
    const Job = await changedJob();
    const changesOnly = await agent.req('POST', '/v1/job/example/plan', { Job, Diff: true, Contextual: false });
    expect(changesOnly.json.Diff.TaskGroups[0].Objects[0].Fields).to.deep.equal([f('Edited', 'Attempts', '2', '5')]);
    const query = await agent.req('POST', '/v1/job/example/plan?contextual=false', { Job, Diff: true });
    expect(query.json.Diff).to.deep.equal(changesOnly.json.Diff);
    for (const body of [{ Job, Diff: false }, { Job }]) expect((await agent.req('POST', '/v1/job/example/plan', body)).json.Diff).to.equal(null);
  });

  it('berth job plan prints the diff as nomad does, then the dry run and the check-index advice', async () => {
    const path = join(dir, 'changed.nomad.hcl');
    const plan = await agent.main(['job', 'plan', path]);
    expect(plan.code, plan.stderr).to.equal(1);
    expect(plan.stdout).to.equal(
      [
        '+/- Job: "example"',
        '+/- Priority: "50" => "60"',
        '+/- Task Group: "web" (1 create/destroy update)',
        '  +/- RestartPolicy {',
        '    +/- Attempts:        "2" => "5"',
        '        Delay:           "15000000000"',
        '        Interval:        "1800000000000"',
        '        Mode:            "fail"',
        '        RenderTemplates: "false"',
        '      }',
        '  +/- Task: "server" (forces create/destroy update)',
        '    +   Env[MODE]: "x"',
        '    +/- Config {',
        '      +/- args[0]: "1000" => "2000"',
        '          command: "/bin/sleep"',
        '        }',
        '',
        'Scheduler dry-run:',
        '- All tasks successfully allocated.',
        '',
        `Job Modify Index: ${jobModifyIndex}`,
        'To submit the job with version verification run:',
        '',
        `berth job run -check-index ${jobModifyIndex} ${path}`,
        '',
        'When running the job with the check-index flag, the job will only be run if the',
        'job modify index given matches the server-side version. If the index has',
        "changed, another user has modified the job and the plan's results are",
        'potentially invalid.',
        '',
      ].join('\n'),
    );
  });

  it('an unchanged file: unmarked headers, the group’s ignore count, exit 0; -diff=false leaves the diff out', async () => {
    const path = join(dir, 'example.nomad.hcl');
    const same = await agent.main(['job', 'plan', path]);
    expect(same.code, same.stderr).to.equal(0);
    expect(same.stdout).to.match(/^Job: "example"\nTask Group: "web" \(1 ignore\)\n {2}Task: "server"\n\nScheduler dry-run:\n/);
    const bare = await agent.main(['job', 'plan', '-diff=false', path]);
    expect(bare.stdout).to.match(/^Scheduler dry-run:\n- All tasks successfully allocated\.\n\nJob Modify Index: /);
  });
});
