/**
 * What the plan adds to the job diff: each group's `Updates` under Nomad's names, `Count`'s
 * forces create/destroy, and per changed task what the change forces, from the scheduler's own
 * rule (so the annotation agrees with the group's counts).
 */
import { expect } from 'chai';
import { annotateDiff, jobDiff, planDiff, type JobDiff } from '../../../agent/jobs/diff/index.ts';
import { apiJobToJob } from '../../../agent/jobs/jobspec.ts';
import { parseJobspec } from '../../../agent/jobspec/index.ts';
import type { ApiJob } from '../../../agent/state/types.ts';

const hcl = (o: { count?: number; cmd?: string; kill?: string; tag?: string } = {}) => `job "example" {
  group "web" {
    count = ${o.count ?? 1}
    task "server" {
      driver = "raw_exec"
      config {
        command = "${o.cmd ?? '/bin/sleep'}"
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
    task "logger" {
      driver       = "raw_exec"
      kill_timeout = "${o.kill ?? '5s'}"
      config {
        command = "/bin/cat"
      }
      service {
        name     = "logger"
        provider = "nomad"
        tags     = ["${o.tag ?? 'v1'}"]
      }
    }
  }
}`;

async function version(o: Parameters<typeof hcl>[0]) {
  const api = (await parseJobspec(hcl(o), { filename: 'example.nomad.hcl' })) as ApiJob;
  return { api, job: apiJobToJob(api) };
}

const annotations = (d: JobDiff) => Object.fromEntries(d.TaskGroups!.flatMap((g) => (g.Tasks ?? []).map((t) => [`${g.Name}/${t.Name}`, t.Annotations])));

describe('agent: the plan’s annotations of the job diff', () => {
  it('Updates: the non-zero counts under Nomad’s names, sorted; none for a group the plan does not name', () => {
    const d = jobDiff(undefined, { ID: 'j', TaskGroups: [{ Name: 'a' }, { Name: 'b' }] }, true);
    annotateDiff(d, { a: { Place: 2, Stop: 1, Ignore: 0, InPlaceUpdate: 3, DestructiveUpdate: 4, Migrate: 5, Canary: 6 } }, () => true);
    expect(d.TaskGroups!.map((g) => g.Updates)).to.deep.equal([
      { canary: 6, create: 2, 'create/destroy update': 4, destroy: 1, 'in-place update': 3, migrate: 5 },
      null,
    ]);
  });

  it('Count: forces create when it grows, forces destroy when it shrinks', async () => {
    const one = await version({ count: 1 });
    const three = await version({ count: 3 });
    const up = planDiff(one, three, {}, true).TaskGroups![0]!.Fields!;
    const down = planDiff(three, one, {}, true).TaskGroups![0]!.Fields!;
    expect(up).to.deep.equal([{ Type: 'Edited', Name: 'Count', Old: '1', New: '3', Annotations: ['forces create'] }]);
    expect(down[0]!.Annotations).to.deep.equal(['forces destroy']);
  });

  it('a new job: every task forces create', async () => {
    const d = planDiff(undefined, await version({}), { web: { Place: 1 } }, true);
    expect([d.Type, d.TaskGroups![0]!.Updates, annotations(d)]).to.deep.equal([
      'Added',
      { create: 1 },
      { 'web/logger': ['forces create'], 'web/server': ['forces create'] },
    ]);
  });

  it('per task, the scheduler’s rule: a config change forces create/destroy, a kill timeout or a service tag in-place', async () => {
    const now = await version({});
    const d = planDiff(now, await version({ cmd: '/bin/sleepy', kill: '9s' }), { web: { DestructiveUpdate: 1 } }, true);
    expect(annotations(d)).to.deep.equal({ 'web/logger': ['forces in-place update'], 'web/server': ['forces create/destroy update'] });
    const tags = planDiff(now, await version({ tag: 'v2' }), { web: { InPlaceUpdate: 1 } }, true);
    expect(annotations(tags)).to.deep.equal({ 'web/logger': ['forces in-place update'], 'web/server': null });
  });

  it('a task added to a kept group forces create/destroy update; a removed group’s tasks force destroy', () => {
    const old = {
      ID: 'j',
      TaskGroups: [
        { Name: 'g', Tasks: [{ Name: 'a' }] },
        { Name: 'gone', Tasks: [{ Name: 'x' }] },
      ],
    };
    const neu = { ID: 'j', TaskGroups: [{ Name: 'g', Tasks: [{ Name: 'a' }, { Name: 'b' }] }] };
    const asked: string[] = [];
    const d = annotateDiff(jobDiff(old, neu, true), {}, (g, t) => (asked.push(`${g}/${t}`), false));
    expect(annotations(d)).to.deep.equal({ 'g/a': null, 'g/b': ['forces create/destroy update'], 'gone/x': ['forces destroy'] });
    expect(asked, 'the rule is asked only about edited tasks').to.deep.equal([]);
  });
});
