/**
 * Every problem of a job file in one pass (issue 36, item 2): expression errors
 * (in `locals` too), and refused stanzas are reported together, sorted by position, each with its
 * line and column; an unknown `${NAME}` is left for the task's environment, not refused.
 */
import { expect } from 'chai';
import { JobspecError } from '../../../index.ts';
import { parseJobspec } from '../../../agent/jobspec/index.ts';

const HCL = `locals {
  x = env("HOME")
}
job "x" {
  group "g" {
    volume "v" {
      type = "host"
    }
    task "t" {
      driver = "raw_exec"
      vault {
        policies = ["a"]
      }
      config {
        command = upper(["a"])
      }
      env {
        A = "\${local.x}"
        B = "\${SOME_RUNTIME_NAME}"
        C = local.y
      }
    }
  }
}
`;

describe('jobspec: every problem of a file in one pass', () => {
  it('expression errors (in locals too) and refused stanzas come together, in file order, with line:column', async () => {
    const err = (await parseJobspec(HCL, { filename: 'x.nomad.hcl' }).catch((e: unknown) => e)) as JobspecError;
    expect(err).to.be.instanceOf(JobspecError);
    expect(err.issues).to.deep.equal([
      '2:3: locals[0].x: Call to unknown function; There is no function named "env".',
      '6:5: volume is not supported by berth (job.taskGroups[0].volumes)',
      '11:7: vault is not supported by berth (job.taskGroups[0].tasks[0].vault)',
      '15:9: job.group.g[0].task.t[0].config[0].command: Invalid function argument; Invalid value for "str" parameter: string required.',
      '20:9: job.group.g[0].task.t[0].env[0].C: Unsupported attribute; This object does not have an attribute named "y".',
    ]);
    expect(err.message).to.match(/^x\.nomad\.hcl:2:3: invalid job \(5 problems\)/);
    expect(err.unsupported.map((u) => u.stanza)).to.include.members(['volume', 'vault']);
  });

  it('an unknown ${NAME} alone is no problem: it is left as written for the task env', async () => {
    const ok = HCL.replace(/locals \{\n {2}x = env\("HOME"\)\n\}\n/, '')
      .replace(/ {4}volume "v" \{\n {6}type = "host"\n {4}\}\n/, '')
      .replace(/ {6}vault \{\n {8}policies = \["a"\]\n {6}\}\n/, '')
      .replace('upper(["a"])', '"/bin/true"')
      .replace('A = "${local.x}"\n', '')
      .replace('C = local.y\n', '');
    const api = (await parseJobspec(ok)) as { TaskGroups: Array<{ Tasks: Array<{ Env: Record<string, string> }> }> };
    expect(api.TaskGroups[0]!.Tasks[0]!.Env).to.deep.equal({ B: '${SOME_RUNTIME_NAME}' });
  });
});
