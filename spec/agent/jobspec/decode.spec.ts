/**
 * `decodeBlock`: hcl2json's JSON of a job block to Nomad's API Job by the stanza tables. Each case
 * decodes a whole job file and asserts the whole job, every issue (berth path, problem, line and
 * column) and every refused stanza: the conversions HCL allows, labelled blocks in the file's
 * order, jobspec2's constraint shorthands, static ports as reserved ones, required arguments.
 */
import { expect } from 'chai';
import { decodeBlock, type DecodeContext } from '../../../agent/jobspec/decode.ts';
import { parseHcl } from '../../../agent/jobspec/hcl.ts';
import { SourceIndex } from '../../../agent/jobspec/source-index.ts';

/** The job block of `text` decoded: the API job, the issues and the refused stanzas. */
async function decode(text: string) {
  const root = (await parseHcl(text, 'f.hcl')) as { job: Record<string, Array<Record<string, unknown>>> };
  const [id] = Object.keys(root.job);
  const ctx: DecodeContext = { source: new SourceIndex(text), issues: [], unsupported: [] };
  const api = decodeBlock('job', root.job[id!]![0]!, 'job', ctx, [['job', id!]]);
  return { api, issues: ctx.issues, unsupported: ctx.unsupported };
}

describe('jobspec: decodeBlock, a job block to Nomad API job', () => {
  it('a job: conversions, blocks, labelled blocks in the file order, constraint shorthands, static ports', async () => {
    const text = `job "web" {
  type        = "service"
  priority    = "50"
  all_at_once = "true"
  datacenters = ["dc1", 2, true]
  meta {
    a = 1
    b = true
  }
  constraint {
    attribute = "\${attr.kernel.name}"
    value     = "linux"
  }
  constraint {
    distinct_hosts = true
  }
  constraint {
    attribute         = "x"
    distinct_property = "\${meta.rack}"
  }
  affinity {
    attribute = "\${node.class}"
    version   = ">= 1"
    regexp    = ""
    weight    = 50
  }
  group "b" {
    count = 1
    network {
      port "http" {
        static = 80
      }
      port "dyn" {}
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "x"
      }
      kill_timeout = "1.5s"
    }
  }
  group "a" {}
}
`;
    expect(await decode(text)).to.deep.equal({
      api: {
        Affinities: [{ LTarget: '${node.class}', RTarget: '>= 1', Operand: 'version', Weight: 50 }],
        AllAtOnce: true,
        Constraints: [
          { LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' },
          { LTarget: '', RTarget: '', Operand: 'distinct_hosts' },
          { LTarget: '${meta.rack}', RTarget: '', Operand: 'distinct_property' },
        ],
        Datacenters: ['dc1', '2', 'true'],
        TaskGroups: [
          {
            Name: 'b',
            Count: 1,
            Networks: [{ DynamicPorts: [{ Label: 'dyn' }], ReservedPorts: [{ Label: 'http', Value: 80 }] }],
            Tasks: [{ Name: 't', Config: { command: 'x' }, Driver: 'raw_exec', KillTimeout: 1_500_000_000 }],
          },
          { Name: 'a' },
        ],
        Meta: { a: '1', b: 'true' },
        Priority: 50,
        Type: 'service',
      },
      issues: [],
      unsupported: [],
    });
  });

  it('constraint and affinity shorthands: the last one set wins, an empty one is none, distinct_* only when set', async () => {
    const text = `job "j" {
  constraint {
    attribute = "a"
    version   = "1"
    semver    = "2"
    regexp    = "3"
  }
  constraint {
    attribute      = "b"
    operator       = "!="
    value          = "c"
    set_contains   = ""
    distinct_hosts = false
  }
  constraint {
    attribute         = "d"
    distinct_property = ""
  }
  constraint {
    operator     = "<"
    set_contains = "x,y"
  }
  affinity {
    attribute        = "e"
    set_contains_any = "p"
    set_contains_all = "q"
    weight           = -20
  }
  affinity {
    attribute    = "f"
    semver       = ">= 2"
    set_contains = "r"
  }
}
`;
    expect(await decode(text)).to.deep.equal({
      api: {
        Affinities: [
          { LTarget: 'e', RTarget: 'q', Operand: 'set_contains_all', Weight: -20 },
          { LTarget: 'f', RTarget: 'r', Operand: 'set_contains' },
        ],
        Constraints: [
          { LTarget: 'a', RTarget: '3', Operand: 'regexp' },
          { LTarget: 'b', RTarget: 'c', Operand: '!=' },
          { LTarget: 'd', RTarget: '', Operand: '=' },
          { LTarget: '', RTarget: 'x,y', Operand: 'set_contains' },
        ],
      },
      issues: [],
      unsupported: [],
    });
  });

  it('values of the wrong kind, unknown fields and repeated blocks: each an issue at its line and column', async () => {
    const text = `job "bad" {
  priority    = 1.5
  all_at_once = "yes"
  datacenters = "dc1"
  meta = [1]
  typo = 1
  vault {}
  update = 3
  periodic {}
  periodic {}
  constraint = "c"
  spread {
    zzz = 1
  }
}
`;
    expect(await decode(text)).to.deep.equal({
      api: { Spreads: [{}] },
      issues: [
        { path: 'job.allAtOnce', problem: 'must be true or false', at: { line: 3, column: 3 } },
        { path: 'job.constraints', problem: 'must be blocks', at: { line: 11, column: 3 } },
        { path: 'job.datacenters', problem: 'must be a list of strings', at: { line: 4, column: 3 } },
        { path: 'job.meta', problem: 'must be a map', at: { line: 5, column: 3 } },
        { path: 'job.periodic', problem: 'only one periodic block is allowed', at: { line: 9, column: 3 } },
        { path: 'job.priority', problem: 'must be a whole number', at: { line: 2, column: 3 } },
        {
          path: 'job.spreads[0].zzz',
          problem: 'unknown field "zzz" in spread (known: attribute, weight, target)',
          at: { line: 13, column: 5 },
        },
        { path: 'job.typo', problem: 'unknown field "typo" in job (did you mean "type"?)', at: { line: 6, column: 3 } },
        { path: 'job.update', problem: 'must be a block', at: { line: 8, column: 3 } },
      ],
      unsupported: [{ stanza: 'vault', path: 'job.vault', at: { line: 7, column: 3 } }],
    });
  });

  it('repeated map and config blocks, a did-you-mean for accepted and refused names, required arguments given', async () => {
    const text = `job "j" {
  node_pol = "x"
  vaul {}
  meta {
    a = "1"
  }
  meta {
    b = "2"
  }
  group "g" {
    task "t" {
      config {
        a = 1
      }
      config {
        b = 2
      }
      template {
        change_script {
          command       = "/bin/true"
          fail_on_error = false
        }
      }
      service {
        check {
          header {
            A = "x"
          }
          header {
            B = "y"
          }
          interval = "1m30s"
          timeout  = ["1s"]
        }
      }
    }
    network {
      port "neg" {
        static = -1
      }
    }
  }
}
`;
    expect(await decode(text)).to.deep.equal({
      api: {
        TaskGroups: [
          {
            Name: 'g',
            Networks: [{ DynamicPorts: [{ Label: 'neg', Value: -1 }], ReservedPorts: null }],
            Tasks: [
              {
                Name: 't',
                Services: [{ Checks: [{ Interval: 90_000_000_000 }] }],
                Templates: [{ ChangeScript: { Command: '/bin/true', FailOnError: false } }],
              },
            ],
          },
        ],
      },
      issues: [
        { path: 'job.taskGroups[0].tasks[0].config', problem: 'must be a block', at: { line: 12, column: 7 } },
        { path: 'job.taskGroups[0].tasks[0].services[0].checks[0].header', problem: 'must be a map', at: { line: 26, column: 11 } },
        {
          path: 'job.taskGroups[0].tasks[0].services[0].checks[0].timeout',
          problem: 'must be a duration string like "30s"',
          at: { line: 33, column: 11 },
        },
        { path: 'job.meta', problem: 'must be a map', at: { line: 4, column: 3 } },
        { path: 'job.node_pol', problem: 'unknown field "node_pol" in job (did you mean "node_pool"?)', at: { line: 2, column: 3 } },
        { path: 'job.vaul', problem: 'unknown field "vaul" in job (did you mean "vault"?)', at: { line: 3, column: 3 } },
      ],
      unsupported: [],
    });
  });

  it("HCL's JSON syntax: labelled blocks that are not blocks, lists of the wrong kind; no line to name", () => {
    const text = '{"job": {"j": {"group": {"g": 1, "h": [1, 2], "i": [{"count": 1}]}, "datacenters": ["a", ["x"]], "constraint": [1], "update": [{}, {}]}}}';
    const ctx: DecodeContext = { source: new SourceIndex(text), issues: [], unsupported: [] };
    const api = decodeBlock('job', (JSON.parse(text) as { job: { j: Record<string, unknown> } }).job.j, 'job', ctx, [['job', 'j']]);
    expect({ api, issues: ctx.issues }).to.deep.equal({
      api: { TaskGroups: [{ Name: 'i', Count: 1 }] },
      issues: [
        { path: 'job.taskGroups', problem: 'group "g" must be a block', at: undefined },
        { path: 'job.taskGroups', problem: 'group "h" must be a block', at: undefined },
        { path: 'job.datacenters', problem: 'must be a list of strings', at: undefined },
        { path: 'job.constraints', problem: 'must be blocks', at: undefined },
        { path: 'job.update', problem: 'only one update block is allowed', at: undefined },
      ],
    });
  });

  it('a string field takes a number or bool as its text; a list is not a string; a blank count is not a number', async () => {
    const text = `job "j" {
  region    = 5
  namespace = true
  type      = ["x"]
  group "g" {
    count = " "
    network {
      mode = "host"
    }
  }
}
`;
    expect(await decode(text)).to.deep.equal({
      api: { Namespace: 'true', Region: '5', TaskGroups: [{ Name: 'g', Networks: [{ Mode: 'host', ReservedPorts: null, DynamicPorts: null }] }] },
      issues: [
        { path: 'job.taskGroups[0].count', problem: 'must be a whole number', at: { line: 6, column: 5 } },
        { path: 'job.type', problem: 'must be a string', at: { line: 4, column: 3 } },
      ],
      unsupported: [],
    });
  });

  it('a group attribute is not a labelled block', async () => {
    expect(await decode('job "j" {\n  group = "x"\n}\n')).to.deep.equal({
      api: {},
      issues: [{ path: 'job.taskGroups', problem: 'group blocks need a name: group "name" { ... }', at: { line: 2, column: 3 } }],
      unsupported: [],
    });
  });

  it('nested stanzas: paths through groups and tasks, maps and header lists, durations, required arguments, duplicates', async () => {
    const text = `job "bad" {
  group "g" {
    count = ""
    meta {
      k  = [1]
      ok = "v"
      n  = 2
    }
    task "t" {
      kill_timeout   = 5
      shutdown_delay = "5 s"
      config         = 1
      service {
        tags = ["a", 1, false]
        check {
          header {
            A = ["x", 1]
            B = "y"
            C = 3
          }
          check_restart {
            lmit = 1
          }
        }
      }
      template {
        change_script {
          args = ["a"]
        }
      }
    }
    task "t" {}
    network {
      dns {}
      port "p" {
        static = "8080"
      }
      port "q" {
        static = 0
        to     = 80
      }
    }
  }
  group "h" {
    task "u" {
      resources {
        cpu = "x"
      }
      logs {}
      logs {}
      lifecycle {
        sidecar = "false"
      }
    }
  }
}
`;
    expect(await decode(text)).to.deep.equal({
      api: {
        TaskGroups: [
          {
            Name: 'g',
            Meta: { ok: 'v', n: '2' },
            Networks: [{ DynamicPorts: [{ Label: 'q', Value: 0, To: 80 }], ReservedPorts: [{ Label: 'p', Value: 8080 }] }],
            Tasks: [
              {
                Name: 't',
                Services: [{ Tags: ['a', '1', 'false'], Checks: [{ CheckRestart: {}, Header: { A: ['x', '1'], B: ['y'] } }] }],
                Templates: [{ ChangeScript: { Args: ['a'] } }],
              },
            ],
          },
          { Name: 'h', Tasks: [{ Name: 'u', Resources: {}, Lifecycle: { Sidecar: false } }] },
        ],
      },
      issues: [
        { path: 'job.taskGroups[0].count', problem: 'must be a whole number', at: { line: 3, column: 5 } },
        { path: 'job.taskGroups[0].meta', problem: 'k: must be a string', at: { line: 4, column: 5 } },
        { path: 'job.taskGroups[0].tasks[0]', problem: 'duplicate task "t"', at: { line: 9, column: 5 } },
        { path: 'job.taskGroups[0].tasks[0].config', problem: 'must be a block', at: { line: 12, column: 7 } },
        { path: 'job.taskGroups[0].tasks[0].killTimeoutMs', problem: 'must be a duration string like "30s"', at: { line: 10, column: 7 } },
        {
          path: 'job.taskGroups[0].tasks[0].services[0].checks[0].checkRestart.lmit',
          problem: 'unknown field "lmit" in check_restart (did you mean "limit"?)',
          at: { line: 22, column: 13 },
        },
        { path: 'job.taskGroups[0].tasks[0].services[0].checks[0].header', problem: 'C: must be a list of strings', at: { line: 16, column: 11 } },
        { path: 'job.taskGroups[0].tasks[0].shutdownDelayMs', problem: 'time: invalid duration "5 s"', at: { line: 11, column: 7 } },
        {
          path: 'job.taskGroups[0].tasks[0].templates[0].changeScript.command',
          problem: 'Missing required argument; The argument "command" is required, but no definition was found.',
          at: { line: 27, column: 9 },
        },
        {
          path: 'job.taskGroups[0].tasks[0].templates[0].changeScript.failOnError',
          problem: 'Missing required argument; The argument "fail_on_error" is required, but no definition was found.',
          at: { line: 27, column: 9 },
        },
        { path: 'job.taskGroups[1].tasks[0].logs', problem: 'only one logs block is allowed', at: { line: 49, column: 7 } },
        { path: 'job.taskGroups[1].tasks[0].resources.cpu', problem: 'must be a whole number', at: { line: 47, column: 9 } },
      ],
      unsupported: [{ stanza: 'dns', path: 'job.taskGroups[0].networks[0].dns', at: { line: 34, column: 7 } }],
    });
  });
});
