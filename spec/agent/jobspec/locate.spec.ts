/**
 * `locateBerthPath`: the line and column of a berth field path in the job file, following the
 * job's group and task names (by index into the API job) and the HCL names of berth's fields
 * (`killTimeoutMs` is `kill_timeout`, `restartPolicy` is `restart`, `memoryMB` is `memory`).
 */
import { expect } from 'chai';
import { locateBerthPath } from '../../../agent/jobspec/locate.ts';
import { SourceIndex } from '../../../agent/jobspec/source-index.ts';

const text = `job "web" {
  datacenters = ["dc1"]
  group "a" {
    count = 1
    task "x" {
      driver = "a"
    }
  }
  group "b" {
    restart {
      attempts = 1
    }
    network {
      port "http" {}
    }
    task "x" {
      config {
        command = "c"
      }
      kill_timeout = "1s"
      shutdown_delay = "1s"
      constraint {
        attribute = "a"
      }
      logs {
        max_files = 2
      }
      resources {
        cpu = 1
        memory = 10
        memory_max = 20
      }
      service {
        check {
          interval = "1s"
        }
      }
    }
    task "y" {
      artifact {
        source = "s"
      }
      restart {
        mode = "fail"
      }
      reschedule {}
    }
  }
  task "alone" {
    driver = "d"
  }
}
`;

const api = {
  ID: 'web',
  TaskGroups: [
    { Name: 'a', Tasks: [{ Name: 'x' }] },
    { Name: 'b', Tasks: [{ Name: 'x' }, { Name: 'y' }] },
    { Name: 'alone', Tasks: [{ Name: 'alone' }] },
  ],
};

/** The 1-based line and column of the `nth` (0-based) `needle` after `after`, counted here from the text itself. */
function at(needle: string, after = '', nth = 0) {
  let i = text.indexOf(after);
  for (let k = 0; k <= nth; k++) i = text.indexOf(needle, k === 0 ? i : i + 1);
  if (i < 0) throw new Error(`${needle} not in the text`);
  const before = text.slice(0, i).split('\n');
  return { line: before.length, column: before.at(-1)!.length + 1 };
}

describe('jobspec: locateBerthPath, a berth path to a line and column', () => {
  const source = new SourceIndex(text);
  const where = (path: string, job: Record<string, unknown> = api) => locateBerthPath(source, job, path);

  it('follows group and task names, not the first block of the kind', () => {
    expect(where('job')).to.deep.equal({ line: 1, column: 1 });
    expect(where('job.datacenters')).to.deep.equal({ line: 2, column: 3 });
    expect(where('job.taskGroups[0].tasks[0].driver')).to.deep.equal(at('driver', 'group "a"'));
    expect(where('job.taskGroups[1].tasks[0].config.command')).to.deep.equal(at('command'));
    expect(where('job.taskGroups[1].tasks[1].artifacts[0].source')).to.deep.equal(at('source ='));
    expect(where('job.taskGroups[1].tasks[0].services[0].checks[0].interval')).to.deep.equal(at('interval'));
    expect(where('job.taskGroups[1].networks[0].dynamicPorts[0]')).to.deep.equal(at('port "http"'));
    expect(where('job.taskGroups[0].count')).to.deep.equal(at('count'));
    // An index into another list (constraints) is skipped; a list of groups, tasks or services without one is a plain word.
    expect(where('job.taskGroups[1].tasks[0].constraints[0].attribute')).to.deep.equal(at('attribute'));
    expect(where('job.taskGroups[1].tasks[0].services.check')).to.deep.equal(at('check'));
  });

  it("berth's field names as the file writes them", () => {
    const task = 'job.taskGroups[1].tasks[0]';
    expect(where(`${task}.killTimeoutMs`)).to.deep.equal(at('kill_timeout'));
    expect(where(`${task}.shutdownDelayMs`)).to.deep.equal(at('shutdown_delay'));
    expect(where(`${task}.logs.maxFiles`)).to.deep.equal(at('max_files'));
    expect(where(`${task}.resources.cpu`)).to.deep.equal(at('cpu'));
    expect(where(`${task}.resources.memoryMB`)).to.deep.equal(at('memory ='));
    expect(where(`${task}.resources.memoryMaxMB`)).to.deep.equal(at('memory_max'));
    expect(where('job.taskGroups[1].restartPolicy.attempts')).to.deep.equal(at('attempts'));
    expect(where('job.taskGroups[1].tasks[1].restartPolicy.mode')).to.deep.equal(at('mode'));
    expect(where('job.taskGroups[1].tasks[1].reschedulePolicy')).to.deep.equal(at('reschedule'));
  });

  it("a job-level task's own group is not in the file: the task is found under the job", () => {
    expect(where('job.taskGroups[2].tasks[0].driver')).to.deep.equal(at('driver', 'task "alone"'));
  });

  it('what is not in the file: the nearest block found before it, or nothing', () => {
    expect(where('job.taskGroups[1].tasks[0].vault.policies')).to.deep.equal(at('task "x"', 'group "b"'));
    // No such group: its label is empty, and the search goes on under the job.
    expect(where('job.taskGroups[9].count')).to.deep.equal(at('count'));
    expect(where('job.taskGroups[10].count')).to.deep.equal(at('count'));
    expect(where('job.taskGroups[0].tasks[4].driver')).to.deep.equal(at('group "a"'));
    expect(where('job', { ID: 'other' })).to.equal(undefined);
    expect(where('job.datacenters', {})).to.equal(undefined);
  });
});
