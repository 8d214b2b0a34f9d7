import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { InvalidAllocationError, parseAllocation, UnsupportedStanzaError, type UnsupportedStanza } from '../../model/index.ts';
import { makeAlloc, mockTask } from '../support/fixtures.ts';

const ID = '6f3c5a2e-8d1b-4c7e-9a0f-1b2c3d4e5f60';
const OTHER = '0e4b7a52-3c7f-4b8e-8d1a-2f6a9b0c1d2e';
const T = 'job.taskGroups[0].tasks[0]';
const G = 'job.taskGroups[0]';

/** A valid berth allocation (one group "web", one mock task "t") as plain JSON. */
const base = (): Record<string, unknown> => JSON.parse(JSON.stringify(makeAlloc([mockTask('t', { run_for: '1s' })], { id: ID })));

/** `base()` with each `path: value` set ("T." and "G." stand for the task and its group; undefined deletes). */
function alloc(patch: Record<string, unknown>): Record<string, unknown> {
  const a = base();
  for (const [path, v] of Object.entries(patch)) {
    const parts = path.replace(/^T\b/, 'job.taskGroups.0.tasks.0').replace(/^G\b/, 'job.taskGroups.0').split('.');
    let cur = a as Record<string, unknown>;
    for (const p of parts.slice(0, -1)) cur = (cur[p] ??= {}) as Record<string, unknown>;
    if (v === undefined) delete cur[parts.at(-1)!];
    else cur[parts.at(-1)!] = v;
  }
  return a;
}

/** The issues `parseAllocation` gives, [] when it accepts. */
function issues(json: unknown): string[] {
  try {
    parseAllocation(json);
    return [];
  } catch (e) {
    expect(e).to.be.instanceOf(InvalidAllocationError);
    return (e as InvalidAllocationError).issues;
  }
}

const http = (over: object) => ({ type: 'http', path: '/', intervalMs: 1000, timeoutMs: 1000, ...over });
const port = (over: object) => ({ label: 'p', ...over });
/** 16 entries of exactly MAX_ARG_STRLEN bytes each (ARG_MAX in all), plus `extra` 3-byte ones. */
const argMax = (extra: number) => ({
  ...Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`K${String(i).padStart(2, '0')}`, 'v'.repeat(131072 - 5)])),
  ...Object.fromEntries(Array.from({ length: extra }, (_, i) => [`Z${i}`.slice(0, 1), ''])),
});
/** 8 meta entries whose NOMAD_META_ forms take 131072 bytes each, twice (ARG_MAX in all), plus `extra` small ones. */
const metaMax = (extra: number) => ({
  ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, 'm'.repeat(131072 - 15)])),
  ...Object.fromEntries(Array.from({ length: extra }, () => ['x', ''])),
});
const group2 = (name: string) => ({ name, tasks: [{ name: 'u', driver: 'mock_driver', config: {} }] });

/**
 * What a user meets when a field is out of bounds: each bound just past (refused, with the path and
 * a reason) and just at it (accepted), for every field with a bound or a rule of its own.
 */
const ROWS: Array<[string, Record<string, unknown>, string[]]> = [
  // Task resources (Nomad's minimums, exact byte counts).
  ['cpu 1', { 'T.resources': { cpu: 1 } }, []],
  ['cpu 0', { 'T.resources': { cpu: 0 } }, [`${T}.resources.cpu: minimum CPU value is 1; got 0`]],
  ['cpu -1', { 'T.resources': { cpu: -1 } }, [`${T}.resources.cpu: must not be negative`, `${T}.resources.cpu: minimum CPU value is 1; got -1`]],
  ['cpu 1.5', { 'T.resources': { cpu: 1.5 } }, [`${T}.resources.cpu: must be an integer`]],
  ['cpu "x"', { 'T.resources': { cpu: 'x' } }, [`${T}.resources.cpu: must be an integer`]],
  ['memoryMB 10', { 'T.resources': { memoryMB: 10 } }, []],
  ['memoryMB 9', { 'T.resources': { memoryMB: 9 } }, [`${T}.resources.memoryMB: minimum MemoryMB value is 10; got 9`]],
  ['memoryMaxMB = memoryMB', { 'T.resources': { memoryMB: 100, memoryMaxMB: 100 } }, []],
  [
    'memoryMaxMB < memoryMB',
    { 'T.resources': { memoryMB: 100, memoryMaxMB: 99 } },
    [`${T}.resources.memoryMaxMB: MemoryMaxMB value (99) should be larger than MemoryMB value (100)`],
  ],
  ['memoryMaxMB alone', { 'T.resources': { memoryMaxMB: 5 } }, []],
  // Nomad's MemoryNoLimit (issue #36): no hard limit, whatever memoryMB is.
  ['memoryMaxMB -1', { 'T.resources': { memoryMB: 100, memoryMaxMB: -1 } }, []],
  ['memoryMaxMB -2', { 'T.resources': { memoryMB: 100, memoryMaxMB: -2 } }, [`${T}.resources.memoryMaxMB: must not be negative, but for -1 (no hard limit)`]],
  ['memoryMB 2^33', { 'T.resources': { memoryMB: 2 ** 33 } }, []],
  [
    'memoryMB 2^33 + 1',
    { 'T.resources': { memoryMB: 2 ** 33 + 1 } },
    [`${T}.resources.memoryMB: must be at most 8589934592 MB (2^53 bytes: beyond that a byte count is not exact)`],
  ],
  ['secretsMB -1', { 'T.resources': { secretsMB: -1 } }, [`${T}.resources.secretsMB: must not be negative`]],
  ['cores 1.5', { 'T.resources': { cores: 1.5 } }, [`${T}.resources.cores: must be an integer`]],
  // Logs.
  ['logs 1 file of 0.5 MB', { 'T.logs': { maxFiles: 1, maxFileSizeMB: 0.5 } }, []],
  ['logs 0 files', { 'T.logs': { maxFiles: 0 } }, [`${T}.logs.maxFiles: must be at least 1`]],
  ['logs files of 0 MB', { 'T.logs': { maxFileSizeMB: 0 } }, [`${T}.logs.maxFileSizeMB: must be positive`]],
  // The task's own fields.
  ['killTimeoutMs 0', { 'T.killTimeoutMs': 0 }, []],
  ['killTimeoutMs -1', { 'T.killTimeoutMs': -1 }, [`${T}.killTimeoutMs: must not be negative`]],
  ['killTimeoutMs "5s"', { 'T.killTimeoutMs': '5s' }, [`${T}.killTimeoutMs: must be a number`]],
  ['lifecycle hook', { 'T.lifecycle': { hook: 'bogus' } }, [`${T}.lifecycle.hook: must be one of "prestart", "poststart", "poststop"`]],
  ['name 5', { 'T.name': 5 }, [`${T}.name: must be a non-empty string`]],
  ['name missing', { 'T.name': undefined }, [`${T}.name: must be a non-empty string`]],
  ['driver ""', { 'T.driver': '' }, [`${T}.driver: must not be empty`]],
  ['config []', { 'T.config': [] }, [`${T}.config: must be an object`]],
  ['config left out', { 'T.config': undefined }, []],
  ['env value 1', { 'T.env': { A: 1 } }, [`${T}.env.A: must be a string`]],
  ['env "x"', { 'T.env': 'x' }, [`${T}.env: must be an object of strings`]],
  ['env key ""', { 'T.env': { '': 'x' } }, [`${T}.env[""]: keys must not be empty`]],
  ['env and meta', { 'T.env': { A: 'b', EMPTY: '' }, 'T.meta': { k: 'v' }, 'G.meta': { g: 'v' }, 'job.meta': { j: 'v' } }, []],
  [
    'env key with NUL',
    { 'T.env': { 'A\0B': 'x' } },
    [`${T}.env["A\\u0000B"]: the key must not contain NUL`, `${T}.env["A\\u0000B"]: the entry must not contain NUL`],
  ],
  [
    'env key past one argument (the entry is named, not the key)',
    { 'T.env': { ['K '.repeat(65536)]: '' } },
    [`${T}.env["${'K '.repeat(20)}..."]: the entry is 131074 bytes, past the kernel's 131072-byte limit for one argument (MAX_ARG_STRLEN)`],
  ],
  ['env exactly ARG_MAX', { 'T.env': argMax(0) }, []],
  [
    'env 3 bytes past ARG_MAX',
    { 'T.env': argMax(1) },
    [
      `${T}.env: is 2097155 bytes as environment variables, past the kernel's 2097152-byte limit (ARG_MAX)`,
      `${T}.env: with job, group and task meta the environment is 2097155 bytes, past the kernel's 2097152-byte limit (ARG_MAX)`,
    ],
  ],
  ['task meta counted twice, to ARG_MAX exactly', { 'T.meta': metaMax(0) }, []],
  [
    'task meta counted twice, past ARG_MAX',
    { 'T.meta': metaMax(1) },
    [`${T}.env: with job, group and task meta the environment is 2097180 bytes, past the kernel's 2097152-byte limit (ARG_MAX)`],
  ],
  ['group meta counted twice, to ARG_MAX exactly', { 'G.meta': metaMax(0) }, []],
  [
    'job and group meta counted twice, past ARG_MAX',
    { 'G.meta': metaMax(0), 'job.meta': { x: '' } },
    [`${T}.env: with job, group and task meta the environment is 2097180 bytes, past the kernel's 2097152-byte limit (ARG_MAX)`],
  ],
  ['a check that is null', { 'T.services': [{ name: 's', checks: [null] }] }, [`${T}.services[0].checks[0]: must be an object`]],
  ['an artifact that is null', { 'T.artifacts': [null] }, [`${T}.artifacts[0]: must be an object`]],
  // The shipped drivers' configs.
  ['raw_exec', { 'T.driver': 'raw_exec', 'T.config': { command: '/bin/echo', args: ['a', 1] } }, []],
  [
    'raw_exec command of spaces',
    { 'T.driver': 'raw_exec', 'T.config': { command: '  ' } },
    [`${T}.config.command: missing required config "command" (a non-empty string)`],
  ],
  [
    'raw_exec config key that is not an identifier',
    { 'T.driver': 'raw_exec', 'T.config': { command: 'x', '9lives': 1 } },
    [`${T}.config["9lives"]: unknown field "9lives" (known: command, args)`],
  ],
  ['exec command with NUL', { 'T.driver': 'exec', 'T.config': { command: 'a\0b' } }, [`${T}.config.command: command must not contain NUL`]],
  [
    'exec argument with NUL',
    { 'T.driver': 'exec', 'T.config': { command: 'x', args: ['ok', 'a\0b'] } },
    [`${T}.config.args[1]: argument must not contain NUL`],
  ],
  [
    'exec argument true (each kind an argument may be is named)',
    { 'T.driver': 'exec', 'T.config': { command: 'x', args: ['a', true] } },
    [`${T}.config.args[1]: must be a string`, `${T}.config.args[1]: must be a number`],
  ],
  [
    'exec eleventh argument with NUL',
    { 'T.driver': 'exec', 'T.config': { command: 'x', args: [...'abcdefghij', 'a\0'] } },
    [`${T}.config.args[10]: argument must not contain NUL`],
  ],
  ['mock unknown key ending in a digit', { 'T.config': { run_for2: '1s' } }, [`${T}.config.run_for2: unknown field "run_for2" (did you mean "run_for"?)`]],
  ['exec unknown key', { 'T.driver': 'exec', 'T.config': { command: 'x', arg: [] } }, [`${T}.config.arg: unknown field "arg" (did you mean "args"?)`]],
  ['mock durations', { 'T.config': { run_for: '', kill_after: 1500, start_block_for: '0s', exit_code: 3 } }, []],
  ['mock negative duration', { 'T.config': { run_for: '-1s' } }, [`${T}.config.run_for: must not be negative`]],
  ['mock bad duration', { 'T.config': { kill_after: 'soon' } }, [`${T}.config.kill_after: time: invalid duration "soon"`]],
  ['mock duration of the wrong type', { 'T.config': { run_for: true } }, [`${T}.config.run_for: must be a duration string like "10s" or a number of ms`]],
  ['mock exit code 1.5', { 'T.config': { exit_code: 1.5 } }, [`${T}.config.exit_code: must be an integer`]],
  ['mock exec_command', { 'T.config': { exec_command: [{ run_for: '1s' }] } }, []],
  ['a driver berth does not ship keeps its config unchecked', { 'T.driver': 'custom', 'T.config': { anything: [1] } }, []],
  ['user 1', { 'T.user': 1 }, [`${T}.user: must be a string`]],
  ['leader "yes"', { 'T.leader': 'yes' }, [`${T}.leader: must be a boolean`]],
  ['restart mode', { 'T.restartPolicy': { mode: 'retry' } }, [`${T}.restartPolicy.mode: must be one of "fail", "delay"`]],
  ['restart attempts -1', { 'T.restartPolicy': { attempts: -1 } }, [`${T}.restartPolicy.attempts: must not be negative`]],
  // Artifacts.
  ['artifact into a subdir', { 'T.artifacts': [{ source: 'x', destination: 'local/a' }] }, []],
  // Nomad's rule (issue #36): anywhere in the alloc dir, an absolute path joined under the task dir.
  ['artifact to /abs (joined under the task dir)', { 'T.artifacts': [{ source: 'x', destination: '/local/x' }] }, []],
  ['artifact into the shared alloc dir', { 'T.artifacts': [{ source: 'x', destination: '../alloc/x' }] }, []],
  ['artifact up ..', { 'T.artifacts': [{ source: 'x', destination: 'a/../../up' }] }, []],
  [
    'artifact out of the alloc dir',
    { 'T.artifacts': [{ source: 'x', destination: '../../x' }] },
    [`${T}.artifacts[0].destination: destination escapes allocation directory`],
  ],
  ['artifact source ""', { 'T.artifacts': [{ source: '' }] }, [`${T}.artifacts[0].source: must not be empty`]],
  ['artifact mode', { 'T.artifacts': [{ source: 'x', mode: 'bad' }] }, [`${T}.artifacts[0].mode: must be one of "any", "file", "dir"`]],
  // Services and checks.
  ['http check', { 'T.services': [{ name: 's', checks: [http({})] }] }, []],
  [
    'http check without path',
    { 'T.services': [{ name: 's', checks: [http({ path: undefined })] }] },
    [`${T}.services[0].checks[0].path: an http check needs a path`],
  ],
  [
    'script check without command',
    { 'T.services': [{ name: 's', checks: [http({ type: 'script' })] }] },
    [`${T}.services[0].checks[0].command: a script check needs a command`],
  ],
  ['script check', { 'T.services': [{ name: 's', checks: [http({ type: 'script', command: '/bin/true' })] }] }, []],
  [
    'check every 999 ms',
    { 'T.services': [{ name: 's', checks: [http({ intervalMs: 999 })] }] },
    [`${T}.services[0].checks[0].intervalMs: minimum check interval is 1s; got 999ms`],
  ],
  [
    'check without an interval',
    { 'T.services': [{ name: 's', checks: [http({ intervalMs: undefined })] }] },
    [`${T}.services[0].checks[0].intervalMs: is required`],
  ],
  ['service name ""', { 'T.services': [{ name: '' }] }, [`${T}.services[0].name: must not be empty`]],
  ['service provider nomad', { 'T.services': [{ name: 's', provider: 'nomad' }] }, []],
  ['a service that is null', { 'T.services': [null] }, [`${T}.services[0]: must be an object`]],
  [
    'service provider ""',
    { 'T.services': [{ name: 's', provider: '' }] },
    [`${T}.services[0].provider: only the "nomad" service provider is supported by berth`],
  ],
  [
    'check without a type',
    { 'T.services': [{ name: 's', checks: [http({ type: undefined })] }] },
    [`${T}.services[0].checks[0].type: must be one of "http", "tcp", "script"`],
  ],
  // The group.
  ['no tasks', { 'G.tasks': [] }, [`${G}.tasks: must be a non-empty array`]],
  ['two tasks named alike', { 'G.tasks': [mockTask('t'), mockTask('u'), mockTask('t')] }, [`${G}.tasks[2].name: duplicate task name "t"`]],
  ['two leaders', { 'G.tasks': [mockTask('t', {}, { leader: true }), mockTask('u', {}, { leader: true })] }, [`${G}.tasks: only one task may be the leader`]],
  ['one leader', { 'G.tasks': [mockTask('t', {}, { leader: true }), mockTask('u', {}, { leader: false })] }, []],
  ['disk 10 MB', { 'G.ephemeralDisk': { sizeMB: 10 } }, []],
  ['disk 9 MB', { 'G.ephemeralDisk': { sizeMB: 9 } }, [`${G}.ephemeralDisk.sizeMB: minimum DiskMB value is 10; got 9`]],
  ['maxRunDurationMs 1', { 'G.maxRunDurationMs': 1 }, []],
  ['maxRunDurationMs 0', { 'G.maxRunDurationMs': 0 }, [`${G}.maxRunDurationMs: MaxRunDuration must be greater than zero`]],
  [
    'lost_after and max_client_disconnect',
    { 'G.disconnect': { lostAfterMs: 1000 }, 'G.maxClientDisconnectMs': 1000 },
    [`${G}.disconnect.lostAfterMs: using both lost_after and max_client_disconnect is not allowed`],
  ],
  ['lost_after alone', { 'G.disconnect': { lostAfterMs: 1000 } }, []],
  ['max_client_disconnect alone', { 'G.maxClientDisconnectMs': 1000 }, []],
  [
    'disconnect reconcile',
    { 'G.disconnect': { reconcile: 'newest' } },
    [`${G}.disconnect.reconcile: must be one of "best_score", "keep_original", "keep_replacement", "longest_running"`],
  ],
  ['port 65535, to -1', { 'G.networks': [{ dynamicPorts: [port({ value: 65535, to: -1 })] }] }, []],
  ['network mode ""', { 'G.networks': [{ mode: '' }] }, [`${G}.networks[0].mode: only "host" networking is supported by berth`]],
  ['port 65536', { 'G.networks': [{ reservedPorts: [port({ value: 65536 })] }] }, [`${G}.networks[0].reservedPorts[0].value: must be at most 65535`]],
  ['port to -2', { 'G.networks': [{ dynamicPorts: [port({ to: -2 })] }] }, [`${G}.networks[0].dynamicPorts[0].to: must be at least -1`]],
  ['port label ""', { 'G.networks': [{ dynamicPorts: [port({ label: '' })] }] }, [`${G}.networks[0].dynamicPorts[0].label: must not be empty`]],
  [
    'reschedule delay function',
    { 'G.reschedulePolicy': { delayFunction: 'linear' } },
    [`${G}.reschedulePolicy.delayFunction: must be one of "constant", "exponential", "fibonacci", ""`],
  ],
  ['migrate health check', { 'G.migrate': { healthCheck: 'manual' } }, [`${G}.migrate.healthCheck: must be one of "checks", "task_states"`]],
  ['update health check', { 'G.update': { healthCheck: 'none' } }, [`${G}.update.healthCheck: must be one of "checks", "task_states", "manual"`]],
  ['group count -1', { 'G.count': -1 }, [`${G}.count: must not be negative`]],
  ['group meta 1', { 'G.meta': { k: 1 } }, [`${G}.meta.k: must be a string`]],
  ['a task that is null', { 'G.tasks': [null, { name: 't', driver: 'mock_driver' }] }, [`${G}.tasks[0]: must be an object`]],
  [
    'two tasks without names (no duplicate is claimed)',
    { 'G.tasks': [{ driver: 'mock_driver' }, { driver: 'mock_driver' }] },
    [`${G}.tasks[0].name: must be a non-empty string`, `${G}.tasks[1].name: must be a non-empty string`],
  ],
  ['tasks "x"', { 'G.tasks': 'x' }, [`${G}.tasks: must be an array`]],
  // The job.
  ['priority 1', { 'job.priority': 1 }, []],
  ['priority 100', { 'job.priority': 100 }, []],
  ['priority 0', { 'job.priority': 0 }, ['job.priority: job priority must be between [1, 100]; got 0']],
  ['priority 101', { 'job.priority': 101 }, ['job.priority: job priority must be between [1, 100]; got 101']],
  ['two groups named alike', { 'job.taskGroups': [group2('web'), group2('web')] }, ['job.taskGroups[1].name: duplicate group name "web"']],
  ['two groups', { 'job.taskGroups': [group2('web'), group2('db')] }, []],
  ['job type', { 'job.type': 'cron' }, ['job.type: must be one of "service", "batch", "system", "sysbatch"']],
  ['job id ""', { 'job.id': '', jobId: undefined }, ['job.id: must not be empty']],
  ['job id missing', { 'job.id': undefined, jobId: undefined }, ['job.id: is required']],
  ['job id 5', { 'job.id': 5, jobId: undefined }, ['job.id: must be a string']],
  ['no groups', { 'job.taskGroups': [] }, ['job.taskGroups: must be a non-empty array', 'taskGroup: failed to lookup task group "web"']],
  ['datacenters "dc1"', { 'job.datacenters': 'dc1' }, ['job.datacenters: must be an array of strings']],
  ['datacenters [1]', { 'job.datacenters': [1] }, ['job.datacenters[0]: must be a string']],
  ['submitTime -1', { 'job.submitTime': -1 }, ['job.submitTime: must not be negative']],
  // The allocation.
  ['id not a UUID', { id: 'abc' }, ['id: must be a 36-character UUID']],
  ['id 5', { id: 5 }, ['id: must be a string']],
  ['jobId of another job', { jobId: 'other' }, ['jobId: must match job.id "example"']],
  ['taskGroup not in the job', { taskGroup: 'db' }, ['taskGroup: failed to lookup task group "db"']],
  ['taskGroup missing', { taskGroup: undefined }, ['taskGroup: is required']],
  ['taskGroup 5', { taskGroup: 5 }, ['taskGroup: must be a string']],
  ['taskGroup ""', { taskGroup: '' }, ['taskGroup: must not be empty']],
  ['previousAllocation', { previousAllocation: OTHER }, []],
  ['previousAllocation not a UUID', { previousAllocation: 'abc' }, ['previousAllocation: must be a 36-character UUID']],
  ['previousAllocation itself', { previousAllocation: ID }, ['previousAllocation: must not be the allocation itself']],
  ['preemptedAllocations', { preemptedAllocations: [OTHER] }, []],
  [
    'preemptedAllocations bad and itself',
    { preemptedAllocations: [OTHER, 'abc', ID] },
    ['preemptedAllocations[1]: must be a 36-character UUID', 'preemptedAllocations[2]: must not be the allocation itself'],
  ],
  ['preemptedAllocations "x"', { preemptedAllocations: 'x' }, ['preemptedAllocations: must be an array of allocation ids']],
  ['desiredStatus', { desiredStatus: 'go' }, ['desiredStatus: must be one of "run", "stop", "evict"']],
  ['clientStatus', { clientStatus: 'ok' }, ['clientStatus: must be one of "pending", "running", "complete", "failed", "lost", "unknown"']],
  ['allocModifyIndex -1', { allocModifyIndex: -1 }, ['allocModifyIndex: must not be negative']],
  ['allocModifyIndex 1.5', { allocModifyIndex: 1.5 }, ['allocModifyIndex: must be an integer']],
  ['task state', { taskStates: { t: { state: 'done' } } }, ['taskStates.t.state: must be one of "pending", "running", "dead"']],
  [
    'task events',
    { taskStates: { t: { events: [{ type: 'Started', time: 1 }, { time: 1 }, 'x'] } } },
    ['taskStates.t.events[1]: must be an event with a type', 'taskStates.t.events[2]: must be an event with a type'],
  ],
  ['task events "x"', { taskStates: { t: { events: 'x' } } }, ['taskStates.t.events: must be an array']],
  ["a group that is null, before the alloc's", { 'job.taskGroups': [null, group2('web')] }, ['job.taskGroups[0]: must be an object']],
  ['desiredTransition', { desiredTransition: { migrate: 'yes' } }, ['desiredTransition.migrate: must be a boolean']],
  [
    'allocated task without its cpu',
    { allocatedResources: { tasks: { t: { memoryMB: 10 } }, shared: { diskMB: 10, ports: [] } } },
    ['allocatedResources.tasks.t.cpu: is required'],
  ],
  [
    'allocated port',
    { allocatedResources: { tasks: {}, shared: { diskMB: 10, ports: [{ label: 'p', value: 70000, to: 0, hostIp: '' }] } } },
    ['allocatedResources.shared.ports[0].value: must be at most 65535'],
  ],
  // A bounded field of the wrong type is named once, for its type: no bound is compared with a
  // string ('0' < 1 would be true), and no rule reads the fields of a block that is not an object.
  ['cpu "0"', { 'T.resources': { cpu: '0' } }, [`${T}.resources.cpu: must be an integer`]],
  ['memoryMB "5"', { 'T.resources': { memoryMB: '5' } }, [`${T}.resources.memoryMB: must be an integer`]],
  ['memoryMaxMB "5" under memoryMB 20', { 'T.resources': { memoryMB: 20, memoryMaxMB: '5' } }, [`${T}.resources.memoryMaxMB: must be an integer`]],
  ['memoryMaxMB 20 under memoryMB "30"', { 'T.resources': { memoryMB: '30', memoryMaxMB: 20 } }, [`${T}.resources.memoryMB: must be an integer`]],
  [
    'logs "0" files of "0" MB',
    { 'T.logs': { maxFiles: '0', maxFileSizeMB: '0' } },
    [`${T}.logs.maxFiles: must be an integer`, `${T}.logs.maxFileSizeMB: must be a number`],
  ],
  ['check interval "5"', { 'T.services': [{ name: 's', checks: [http({ intervalMs: '5' })] }] }, [`${T}.services[0].checks[0].intervalMs: must be a number`]],
  ['disk "5" MB', { 'G.ephemeralDisk': { sizeMB: '5' } }, [`${G}.ephemeralDisk.sizeMB: must be an integer`]],
  ['priority "0"', { 'job.priority': '0' }, ['job.priority: must be an integer']],
  ['job id 5 with a jobId', { 'job.id': 5, jobId: 'x' }, ['job.id: must be a string']],
  ['a task that is a string', { 'job.taskGroups.0.tasks': ['x'] }, [`${T}: must be an object`]],
  ['raw_exec config "x"', { 'T.driver': 'raw_exec', 'T.config': 'x' }, [`${T}.config: must be an object`]],
];

describe('parseAllocation: the refusals a user meets, field by field', () => {
  for (const [what, patch, want] of ROWS) {
    it(`${what}: ${want.length ? 'refused' : 'accepted'}`, () => {
      expect(issues(alloc(patch))).to.deep.equal(want);
    });
  }
});

/** What `parseAllocation` refuses by name: [stanzas], [other issues]. */
function refused(json: unknown, opts: Parameters<typeof parseAllocation>[1] = {}): [UnsupportedStanza[], string[]] {
  try {
    parseAllocation(json, opts);
    return [[], []];
  } catch (e) {
    if (!(e instanceof UnsupportedStanzaError)) return [[], (e as InvalidAllocationError).issues];
    return [e.unsupported, e.issues.slice(e.unsupported.length)];
  }
}

describe('parseAllocation: a misspelled key gets a did-you-mean', () => {
  const rows: Array<[string, string, string]> = [
    ['T.kill_timeout', `${T}.kill_timeout`, 'killTimeoutMs'],
    ['T.shutdown_delay', `${T}.shutdown_delay`, 'shutdownDelayMs'],
    ['T.artifact', `${T}.artifact`, 'artifacts'],
    ['T.service', `${T}.service`, 'services'],
    ['T.restart', `${T}.restart`, 'restartPolicy'],
    ['T.resources.cpus', `${T}.resources.cpus`, 'cpu'],
    ['T.resources.memory_max', `${T}.resources.memory_max`, 'memoryMaxMB'],
    ['T.logs.max_files', `${T}.logs.max_files`, 'maxFiles'],
    ['T.drivr', `${T}.drivr`, 'driver'],
    ['G.task', `${G}.task`, 'tasks'],
    ['G.disk', `${G}.disk`, 'ephemeralDisk'],
    ['G.reschedule', `${G}.reschedule`, 'reschedulePolicy'],
    ['G.network', `${G}.network`, 'networks'],
    ['job.groups', 'job.groups', 'taskGroups'],
    ['job.task_groups', 'job.task_groups', 'taskGroups'],
    ['taskgroup', 'taskgroup', 'taskGroup'],
    ['desired_status', 'desired_status', 'desiredStatus'],
  ];
  for (const [key, path, want] of rows)
    it(`${key} -> ${want}`, () => {
      const name = path.split('.').at(-1)!;
      expect(issues(alloc({ [key]: 1 }))).to.deep.equal([`${path}: unknown field "${name}" (did you mean "${want}"?)`]);
    });

  it('a check key, and a key nothing is close to (the known keys are listed)', () => {
    expect(issues(alloc({ 'T.services': [{ name: 's', check: [] }] }))).to.deep.equal([
      `${T}.services[0].check: unknown field "check" (did you mean "checks"?)`,
    ]);
    expect(issues(alloc({ 'T.lifecycle': { hook: 'prestart', zzzzzzzz: 1 } }))).to.deep.equal([
      `${T}.lifecycle.zzzzzzzz: unknown field "zzzzzzzz" (known: hook, sidecar)`,
    ]);
  });
});

describe('parseAllocation: stanzas berth does not run are refused by name, with their path', () => {
  const svc = (over: object) => [{ name: 's', ...over }];
  const rows: Array<[string, Record<string, unknown>, UnsupportedStanza]> = [
    ['vault', { 'T.vault': { policies: ['x'] } }, { stanza: 'vault', path: `${T}.vault` }],
    ['a volume', { 'G.volumes': { data: {} } }, { stanza: 'volume', path: `${G}.volumes` }],
    ['a multiregion job', { 'job.multiregion': { regions: [{ name: 'west' }] } }, { stanza: 'multiregion', path: 'job.multiregion' }],
    ['a device', { 'T.resources': { devices: [{}] } }, { stanza: 'device', path: `${T}.resources.devices` }],
    ['logs disabled', { 'T.logs': { disabled: true } }, { stanza: 'logs.disabled', path: `${T}.logs.disabled` }],
    ['an artifact chown', { 'T.artifacts': [{ source: 'x', chown: true }] }, { stanza: 'artifact.chown', path: `${T}.artifacts[0].chown` }],
    ['bridge networking', { 'G.networks': [{ mode: 'bridge' }] }, { stanza: 'network mode "bridge"', path: `${G}.networks[0].mode` }],
    ['network dns', { 'G.networks': [{ dns: { servers: ['1.1.1.1'] } }] }, { stanza: 'network.dns', path: `${G}.networks[0].dns` }],
    [
      'a port ignoring collisions',
      { 'G.networks': [{ reservedPorts: [{ label: 'p', ignoreCollision: true }] }] },
      { stanza: 'port.ignore_collision', path: `${G}.networks[0].reservedPorts[0].ignoreCollision` },
    ],
    [
      'a dynamic port ignoring collisions',
      { 'G.networks': [{ dynamicPorts: [{ label: 'p', ignoreCollision: true }] }] },
      { stanza: 'port.ignore_collision', path: `${G}.networks[0].dynamicPorts[0].ignoreCollision` },
    ],
    ['the consul service provider', { 'G.services': svc({ provider: 'consul' }) }, { stanza: 'service provider "consul"', path: `${G}.services[0].provider` }],
    ['consul connect', { 'T.services': svc({ connect: { native: true } }) }, { stanza: 'connect', path: `${T}.services[0].connect` }],
    [
      'a grpc check',
      { 'T.services': svc({ checks: [{ type: 'grpc', intervalMs: 1000, timeoutMs: 1000 }] }) },
      { stanza: 'check type "grpc"', path: `${T}.services[0].checks[0].type` },
    ],
    [
      'a check body',
      { 'G.services': svc({ checks: [{ type: 'tcp', intervalMs: 1000, timeoutMs: 1000, body: 'x' }] }) },
      { stanza: 'check.body', path: `${G}.services[0].checks[0].body` },
    ],
  ];
  for (const [what, patch, stanza] of rows)
    it(`${what}: refused, or left out with a warning when the host asks`, () => {
      expect(refused(alloc(patch))).to.deep.equal([[stanza], []]);
      const warned: UnsupportedStanza[] = [];
      expect(() => parseAllocation(alloc(patch), { unsupported: 'warn', onWarning: (w) => warned.push(w) })).not.to.throw();
      expect(warned).to.deep.equal([stanza]);
    });

  it('only a stanza that says something is refused by name (an empty one is no field of berth JSON either)', () => {
    for (const set of [true, 'x', 1, [1], { a: 1 }])
      expect(refused(alloc({ 'T.vault': set })), JSON.stringify(set)).to.deep.equal([[{ stanza: 'vault', path: `${T}.vault` }], []]);
    for (const empty of [false, '', 0, [], {}]) {
      const [stanzas, other] = refused(alloc({ 'T.vault': empty }));
      expect(stanzas, JSON.stringify(empty)).to.deep.equal([]);
      expect(other, JSON.stringify(empty)).to.have.length(1);
      expect(other[0], JSON.stringify(empty)).to.match(/^job\.taskGroups\[0\]\.tasks\[0\]\.vault: unknown field "vault" \(known: /);
    }
  });

  it('a container driver is refused even when the host asks for warnings; its config is not checked', () => {
    const docker = alloc({ 'T.driver': 'podman', 'T.config': { image: 'redis' } });
    const stanza = { stanza: 'driver "podman"', path: `${T}.driver` };
    expect(refused(docker)).to.deep.equal([[stanza], []]);
    expect(refused(docker, { unsupported: 'warn' })).to.deep.equal([[stanza], []]);
    let err: unknown;
    try {
      parseAllocation(docker);
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).to.equal(`invalid allocation: driver "podman" is not supported by berth (${T}.driver)`);
  });

  it('a refusal lists the other problems too, in the same error', () => {
    expect(refused(alloc({ 'T.vault': { policies: ['x'] }, 'T.killTimeoutMs': -1 }))).to.deep.equal([
      [{ stanza: 'vault', path: `${T}.vault` }],
      [`${T}.killTimeoutMs: must not be negative`],
    ]);
  });

  it("empty stanzas (Nomad's null, [], {}, false) are not refusals; nor is what another group of the job uses", () => {
    const j = JSON.parse(readFileSync(new URL('../fixtures/nomad-alloc.json', import.meta.url), 'utf8'));
    Object.assign(j.Job.TaskGroups[0].Tasks[0], { Templates: [], Vault: null, Consul: {}, Identity: false, LogConfig: { MaxFiles: 1, Disabled: false } });
    Object.assign(j.Job.TaskGroups[0], { Volumes: {}, Scaling: null });
    j.Job.Constraints = [];
    expect(issues(j)).to.deep.equal([]);
    const other = { ...group2('db'), volumes: { data: {} } };
    expect(refused(alloc({ 'job.taskGroups': [group2('web'), other] }))).to.deep.equal([[], []]);
    expect(refused(alloc({ 'job.taskGroups': [group2('web'), other], taskGroup: 'db' }))).to.deep.equal([
      [{ stanza: 'volume', path: 'job.taskGroups[1].volumes' }],
      [],
    ]);
  });
});
