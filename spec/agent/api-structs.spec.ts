/**
 * Issue #35: every object berth's agent serves, read strictly as Nomad's Go API structs hold it
 * (spec/fixtures/nomad-api-structs.ts, written from Nomad's `api/*.go` by
 * scripts/nomad-api-structs.ts). A real `berth agent -dev` runs a rolling service job, a batch
 * job and a job that cannot be placed; then each endpoint's answer is read against its struct,
 * into every struct it holds:
 *
 * - a field the struct does not have (berth added or renamed one) fails;
 * - a value of the wrong JSON type fails;
 * - a field berth leaves out fails unless docs/agent.md's table of left-out fields lists it, with
 *   why (and a field listed there that berth sends fails too: the table must be true);
 * - a field the table of always-empty fields lists must be sent, and empty, everywhere.
 *
 * A field renamed, dropped or added on either side (berth's encoders, or Nomad's structs after
 * the fixture is written again) fails here. `DUMP_EMPTY=1` prints, per struct, the fields that
 * were sent but empty in every instance read (candidates for the always-empty table).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';
import { goType, newReading, readAs, type Reading } from '../support/api-structs.ts';
import { NOMAD_API_STRUCTS } from '../fixtures/nomad-api-structs.ts';

const SLEEP = "trap 'exit 0' TERM; while :; do sleep 0.1; done";

const webHcl = (version: string) => `job "web" {
  update {
    max_parallel     = 1
    min_healthy_time = "100ms"
    health_check     = "task_states"
  }
  group "g" {
    count = 2
    network {
      port "http" {}
    }
    service {
      name     = "web"
      port     = "http"
      provider = "nomad"
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      env {
        VERSION = "${version}"
      }
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(SLEEP)}]
      }
      kill_timeout = "1s"
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;

const batchHcl = `job "once" {
  type = "batch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;

const bigHcl = `job "big" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 20
        memory = 100000000
      }
    }
  }
}
`;

const slowHcl = `job "slow" {
  update {
    min_healthy_time = "1h"
    healthy_deadline = "2h"
    progress_deadline = "3h"
    health_check     = "task_states"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(SLEEP)}]
      }
      kill_timeout = "1s"
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;

const paramHcl = `job "param" {
  type = "batch"
  parameterized {}
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;

/** The payload struct of each event topic, under the topic's own key (Nomad's `Event.Payload`). */
const PAYLOADS: Record<string, string> = { Job: 'Job', Allocation: 'Allocation', Evaluation: 'Evaluation', Deployment: 'Deployment', Node: 'Node' };

/** The events of `/v1/event/stream?index=1` until one of each topic in `topics` came (bounded). */
async function eventsOf(agent: AgentProcess, topics: string[]): Promise<Array<Record<string, any>>> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 20_000);
  const out: Array<Record<string, any>> = [];
  const missing = new Set(topics);
  try {
    const res = await fetch(`${agent.url}/v1/event/stream?index=1`, {
      signal: ac.signal,
      ...(agent.token ? { headers: { 'X-Nomad-Token': agent.token } } : {}),
    });
    const reader = res.body!.getReader();
    let buf = '';
    while (missing.size > 0) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += Buffer.from(value).toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (!line) continue;
        for (const e of (JSON.parse(line) as { Events?: Array<Record<string, any>> }).Events ?? []) {
          out.push(e);
          missing.delete(e.Topic);
        }
      }
    }
    ac.abort();
  } catch (e) {
    if (!ac.signal.aborted) throw e;
  } finally {
    clearTimeout(timer);
  }
  expect([...missing], 'every topic came within 20 s').to.deep.equal([]);
  return out;
}

/** One table of docs/agent.md's section: struct -> field -> why. */
type FieldTable = Map<string, Map<string, string>>;

/** The section's tables, by the header of their second column (`left out`, `always empty`). */
function docTables(): Record<string, FieldTable> {
  const doc = readFileSync(new URL('../../docs/agent.md', import.meta.url), 'utf8');
  const start = doc.indexOf("\n## What berth leaves out of Nomad's objects\n");
  expect(start, 'docs/agent.md has a section "What berth leaves out of Nomad\'s objects"').to.be.greaterThan(-1);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const out: Record<string, FieldTable> = {};
  let current: FieldTable | undefined;
  for (const line of section.split('\n')) {
    const cells = line.startsWith('|')
      ? line
          .split('|')
          .slice(1, -1)
          .map((c) => c.trim())
      : undefined;
    if (!cells) {
      current = undefined;
      continue;
    }
    if (!current) {
      current = new Map();
      out[cells[1]!] = current;
      continue;
    }
    if (/^-+$/.test(cells[0]!.replace(/[:\s]/g, ''))) continue;
    const struct = /`(\w+)`/.exec(cells[0]!)?.[1];
    expect(struct, `a struct in ${line}`).to.be.a('string');
    const fields = current.get(struct!) ?? new Map<string, string>();
    current.set(struct!, fields);
    for (const m of cells[1]!.matchAll(/`(\w+)`/g)) fields.set(m[1]!, cells[2]!);
  }
  return out;
}

/** Go's zero value of JSON: `null`, `""`, `0`, `false`, Nomad's zero time, an empty list or map, a struct of zeros. */
function isEmpty(v: unknown): boolean {
  if (v === null || v === '' || v === 0 || v === false || v === '0001-01-01T00:00:00Z') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.values(v as object).every(isEmpty);
  return false;
}

/** Struct -> field -> a path where the field held something (for the always-empty table). */
function nonEmpty(value: unknown, type: string, path: string, out: Map<string, Map<string, string>>): void {
  if (value === null || value === undefined) return;
  if (type.startsWith('*')) return nonEmpty(value, type.slice(1), path, out);
  if (type.startsWith('[]')) {
    if (Array.isArray(value)) value.forEach((v, i) => nonEmpty(v, type.slice(2), `${path}[${i}]`, out));
    return;
  }
  if (type.startsWith('map[')) {
    if (typeof value === 'object') for (const [k, v] of Object.entries(value)) nonEmpty(v, type.slice(type.indexOf(']') + 1), `${path}.${k}`, out);
    return;
  }
  const struct = NOMAD_API_STRUCTS[type];
  if (!struct || typeof value !== 'object') return;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const f = struct[k];
    if (f === undefined) continue;
    if (!isEmpty(v)) {
      const m = out.get(type) ?? new Map<string, string>();
      out.set(type, m);
      if (!m.has(k)) m.set(k, `${path}.${k}`);
    }
    nonEmpty(v, goType(f).type, `${path}.${k}`, out);
  }
}

describe('agent: every object as Nomad’s API structs hold it (issue #35)', function () {
  this.timeout(120_000);
  let agent: AgentProcess;
  const reading: Reading = newReading();
  const filled = new Map<string, Map<string, string>>();
  /** What each endpoint was read as. */
  const read: Array<[string, string]> = [];

  before(async function () {
    this.timeout(120_000);
    agent = await new AgentProcess(['-dev']).ready();
    const register = async (hcl: string) => {
      const parsed = await agent.req('POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true });
      expect(parsed.status, parsed.text).to.equal(200);
      check(parsed.json, 'Job', 'POST /v1/jobs/parse');
      const r = await agent.req('POST', '/v1/jobs', { Job: parsed.json });
      expect(r.status, r.text).to.equal(200);
      check(r.json, 'JobRegisterResponse', 'POST /v1/jobs');
      return r.json.EvalID as string;
    };
    const check = (json: unknown, type: string, path: string) => {
      readAs(reading, json, type, path);
      nonEmpty(json, type, path, filled);
      read.push([path, type]);
    };
    const get = async (path: string, type: string, pick: (j: any) => unknown = (j) => j) => {
      const r = await agent.req('GET', path);
      expect(r.status, `${path}: ${r.text.slice(0, 200)}`).to.equal(200);
      check(pick(r.json), type, `GET ${path}`);
      return r.json;
    };

    await register(webHcl('1'));
    await waitFor(agent, '/v1/job/web/deployments', (l: any[]) => l[0]?.Status === 'successful', 'web v0 deployed');
    await register(webHcl('2'));
    await waitFor(agent, '/v1/job/web/deployments', (l: any[]) => l[0]?.JobVersion === 1 && l[0].Status === 'successful', 'web v1 rolled out');
    await register(batchHcl);
    await waitFor(agent, '/v1/job/once/allocations', (l: any[]) => l[0]?.ClientStatus === 'complete', 'the batch job done');
    const blocked = await register(bigHcl);
    await waitFor(agent, `/v1/evaluation/${blocked}`, (e) => e.Status !== 'pending', 'the big job evaluated');

    await get('/v1/jobs', '[]*JobListStub');
    for (const id of ['web', 'once', 'big']) {
      await get(`/v1/job/${id}`, 'Job');
      await get(`/v1/job/${id}/versions`, '[]*Job', (j) => j.Versions);
      await get(`/v1/job/${id}/summary`, 'JobSummary');
      await get(`/v1/job/${id}/allocations`, '[]*AllocationListStub');
      await get(`/v1/job/${id}/evaluations`, '[]*Evaluation');
      await get(`/v1/job/${id}/deployments`, '[]*Deployment');
    }
    await get('/v1/job/web/deployment', 'Deployment');
    for (const a of await get('/v1/allocations', '[]*AllocationListStub')) await get(`/v1/allocation/${a.ID}`, 'Allocation');
    for (const e of await get('/v1/evaluations', '[]*Evaluation')) {
      await get(`/v1/evaluation/${e.ID}?related=true`, 'Evaluation');
      await get(`/v1/evaluation/${e.ID}/allocations`, '[]*AllocationListStub');
    }
    for (const d of await get('/v1/deployments', '[]*Deployment')) await get(`/v1/deployment/${d.ID}`, 'Deployment');
    const [node] = await get('/v1/nodes', '[]*NodeListStub');
    await get('/v1/nodes?resources=true&os=true', '[]*NodeListStub');
    await get(`/v1/node/${node.ID}`, 'Node');
    await get(`/v1/node/${node.ID}/allocations`, '[]*Allocation');
    await get('/v1/agent/self', 'AgentSelf');
    await get('/v1/agent/members', 'ServerMembers');
    await get('/v1/acl/token/self', 'ACLToken');
    await get('/v1/operator/raft/configuration', 'RaftConfiguration');
    await get('/v1/operator/scheduler/configuration', 'SchedulerConfiguration', (j) => j.SchedulerConfig);

    // The write answers and the objects beside the main ones.
    const send = async (method: string, path: string, body: unknown, type: string) => {
      const r = await agent.req(method, path, body);
      expect(r.status, `${method} ${path}: ${r.text.slice(0, 200)}`).to.equal(200);
      check(r.json, type, `${method} ${path}`);
      return r.json;
    };
    const web3 = (await agent.req('POST', '/v1/jobs/parse', { JobHCL: webHcl('3'), Canonicalize: true })).json;
    const plan = await send('POST', '/v1/job/web/plan', { Job: web3, Diff: true }, 'JobPlanResponse');
    expect(plan.Diff?.Type, 'the plan diff').to.equal('Edited');
    await send('PUT', '/v1/validate/job', { Job: web3 }, 'JobValidateResponse');
    const versions = await get('/v1/job/web/versions?diffs=true', 'JobVersionsResponse');
    expect(versions.Diffs, 'one diff per version but the oldest').to.have.length(versions.Versions.length - 1);
    await get('/v1/job/web/scale', 'JobScaleStatusResponse');
    const webAllocs = (await agent.req('GET', '/v1/job/web/allocations')).json as Array<{ ID: string; ClientStatus: string }>;
    const live = webAllocs.find((a) => a.ClientStatus === 'running')!;
    expect(live, 'a running web alloc').to.be.an('object');
    await get(`/v1/client/allocation/${live.ID}/stats`, 'AllocResourceUsage');
    await get(`/v1/client/fs/ls/${live.ID}?path=/`, '[]*AllocFileInfo');
    await get(`/v1/client/fs/stat/${live.ID}?path=/alloc`, 'AllocFileInfo');
    await waitFor(agent, '/v1/service/web', (l: unknown[]) => l.length > 0, 'the web service registered');
    await get('/v1/services', '[]*ServiceRegistrationListStub');
    await get('/v1/service/web', '[]*ServiceRegistration');
    await send('PUT', '/v1/var/nomad/jobs/web', { Namespace: 'default', Path: 'nomad/jobs/web', Items: { greeting: 'hello' } }, 'Variable');
    await get('/v1/vars', '[]*VariableMetadata');
    await get('/v1/var/nomad/jobs/web', 'Variable');
    const sched = await get('/v1/operator/scheduler/configuration', 'SchedulerConfigurationResponse');
    await send('PUT', '/v1/operator/scheduler/configuration', sched.SchedulerConfig, 'SchedulerSetConfigurationResponse');
    await register(slowHcl);
    const [slow] = await waitFor(agent, '/v1/job/slow/deployments', (l: any[]) => l[0]?.Status === 'running', 'the slow deployment running');
    await send('POST', `/v1/deployment/pause/${slow.ID}`, { DeploymentID: slow.ID, Pause: true }, 'DeploymentUpdateResponse');
    await send('POST', `/v1/deployment/fail/${slow.ID}`, { DeploymentID: slow.ID }, 'DeploymentUpdateResponse');
    await register(paramHcl);
    await send('POST', '/v1/job/param/dispatch', {}, 'JobDispatchResponse');
    const [done] = (await agent.req('GET', '/v1/job/once/allocations')).json as Array<{ ID: string }>;
    await send('POST', `/v1/allocation/${done!.ID}/stop`, {}, 'AllocStopResponse');
    for (const e of await eventsOf(agent, Object.keys(PAYLOADS))) {
      check(e, 'Event', `event ${e.Topic}`);
      const struct = PAYLOADS[e.Topic as string];
      if (struct) {
        expect(Object.keys(e.Payload), `${e.Topic} event payload`).to.deep.equal([e.Topic]);
        check(e.Payload[e.Topic], struct, `event ${e.Topic} ${e.Type}`);
      }
    }
    const gone = await agent.req('DELETE', '/v1/job/big');
    expect(gone.status, gone.text).to.equal(200);
    check(gone.json, 'JobDeregisterResponse', 'DELETE /v1/job/big');
  });
  after(async () => {
    if (process.env.DUMP_EMPTY)
      for (const [st, fields] of reading.present) {
        const empty = [...fields].filter((f) => !filled.get(st)?.has(f));
        if (empty.length) console.log(st, empty.join(' '));
      }
    await agent?.stop();
    await stopCliProcesses();
  });

  it('reads every object berth serves: jobs, stubs, summaries, allocations, evaluations, deployments, the node, the agent, the token, raft, write answers, stats, files, services, variables, events', () => {
    const roots = [
      'Job',
      'JobListStub',
      'JobSummary',
      'Allocation',
      'AllocationListStub',
      'Evaluation',
      'Deployment',
      'Node',
      'NodeListStub',
      'AgentSelf',
      'ServerMembers',
      'ACLToken',
      'RaftConfiguration',
      'SchedulerConfiguration',
      'JobRegisterResponse',
      'JobDeregisterResponse',
      'JobPlanResponse',
      'JobValidateResponse',
      'JobVersionsResponse',
      'JobDispatchResponse',
      'JobScaleStatusResponse',
      'AllocStopResponse',
      'AllocResourceUsage',
      'AllocFileInfo',
      'ServiceRegistrationListStub',
      'ServiceRegistration',
      'Variable',
      'VariableMetadata',
      'DeploymentUpdateResponse',
      'SchedulerConfigurationResponse',
      'SchedulerSetConfigurationResponse',
      'Event',
    ];
    expect(roots.filter((s) => !reading.seen.has(s))).to.deep.equal([]);
    // The objects inside them were reached too (a deployment's groups, an alloc's task states, a failed placement's metric).
    for (const s of ['DeploymentState', 'TaskState', 'TaskEvent', 'AllocatedResources', 'AllocationMetric', 'TaskGroup', 'Task', 'NodeResources', 'DriverInfo'])
      expect(reading.seen.get(s) ?? 0, s).to.be.greaterThan(0);
  });

  it('no field Nomad’s struct lacks, and no value of the wrong JSON type', () => {
    expect(reading.problems.map((p) => `${p.path}: ${p.problem}`)).to.deep.equal([]);
  });

  it("every field berth leaves out is in docs/agent.md's table, with why; every one listed there is indeed left out", () => {
    const table = docTables()['left out'];
    expect(table, "docs/agent.md's table with a `left out` column").to.be.instanceOf(Map);
    const unlisted: string[] = [];
    for (const [struct, fields] of reading.absent)
      for (const [field, path] of fields) if (!table!.get(struct)?.get(field)) unlisted.push(`${struct}.${field} (absent at ${path})`);
    expect(unlisted, 'left out but not in the table: send them, or list them with why').to.deep.equal([]);
    const sent: string[] = [];
    for (const [struct, fields] of table!) {
      expect(NOMAD_API_STRUCTS[struct], `${struct} is one of Nomad's structs`).to.be.an('object');
      for (const field of fields.keys()) {
        expect(NOMAD_API_STRUCTS[struct]![field], `${struct}.${field} is a field of Nomad's`).to.be.a('string');
        if (reading.present.get(struct)?.has(field)) sent.push(`${struct}.${field}`);
      }
    }
    expect(sent, 'listed as left out but sent: take them off the table').to.deep.equal([]);
  });

  it('every field docs/agent.md says berth sends empty is sent, and empty, wherever it was read', () => {
    const table = docTables()['always empty'];
    expect(table, "docs/agent.md's table with an `always empty` column").to.be.instanceOf(Map);
    const wrong: string[] = [];
    for (const [struct, fields] of table!) {
      expect(NOMAD_API_STRUCTS[struct], `${struct} is one of Nomad's structs`).to.be.an('object');
      expect(reading.seen.get(struct) ?? 0, `${struct} was read`).to.be.greaterThan(0);
      for (const [field, why] of fields) {
        expect(NOMAD_API_STRUCTS[struct]![field], `${struct}.${field} is a field of Nomad's`).to.be.a('string');
        expect(why, `${struct}.${field}: why`).to.not.equal('');
        if (!reading.present.get(struct)?.has(field)) wrong.push(`${struct}.${field} is not sent`);
        const at = filled.get(struct)?.get(field);
        if (at) wrong.push(`${struct}.${field} holds something at ${at}: take it off the table`);
      }
    }
    expect(wrong).to.deep.equal([]);
  });
});
