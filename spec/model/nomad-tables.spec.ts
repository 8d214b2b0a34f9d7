import { expect } from 'chai';
import { fromNomad, nomadTableKeys, nomadTime, toNomad, unsupportedCamelKeys, type FromNomadReport } from '../../model/schema/nomad.ts';

/**
 * Nomad's API JSON, key by key: what each PascalCase key of each block becomes in berth's
 * camelCase (and back), which keys are accepted and ignored, and which name a stanza berth refuses.
 * Written out here (not read from the code) so a key dropped or renamed in the tables fails.
 * A mapped entry reads "NomadKey berthKey kind": plain (as is), str ('' = unset), num (0 = unset),
 * dur (ns -> ms, 0 = unset), durSet (ns -> ms, 0 kept), time (ns or RFC 3339 -> ms, zero time =
 * unset), true (false = unset), obj:Block, list:Block.
 */
const TABLES: Record<string, { mapped: string[]; ignored?: string[]; unsupported?: Record<string, string> }> = {
  Job: {
    mapped: [
      'ID id plain',
      'Name name str',
      'Namespace namespace str',
      'Type type str',
      'Priority priority num',
      'Region region str',
      'Datacenters datacenters plain',
      'Meta meta plain',
      'TaskGroups taskGroups list:TaskGroup',
      'Version version plain',
      'ParentID parentId str',
      'ParameterizedJob parameterized obj:ParameterizedJob',
      'Payload payload str',
      'Dispatched dispatched true',
      'Periodic periodic obj:Periodic',
      'Stop stop true',
      'Update update obj:Update',
      'SubmitTime submitTime time',
      'Constraints constraints list:Constraint',
      'Affinities affinities list:Affinity',
      'Spreads spreads list:Spread',
    ],
    ignored: [
      'AllAtOnce',
      'NodePool',
      'Status',
      'StatusDescription',
      'Stable',
      'CreateIndex',
      'ModifyIndex',
      'JobModifyIndex',
      'ConsulToken',
      'VaultToken',
      'ConsulNamespace',
      'VaultNamespace',
      'NomadTokenID',
      'DispatchIdempotencyToken',
      'VersionTag',
      'UI',
      'Reschedule',
      'Migrate',
    ],
    unsupported: {
      Multiregion: 'multiregion',
    },
  },
  TaskGroup: {
    mapped: [
      'Name name plain',
      'Count count plain',
      'Tasks tasks list:Task',
      'EphemeralDisk ephemeralDisk obj:EphemeralDisk',
      'RestartPolicy restartPolicy obj:RestartPolicy',
      'Meta meta plain',
      'ShutdownDelay shutdownDelayMs dur',
      'MaxRunDuration maxRunDurationMs dur',
      'Disconnect disconnect obj:Disconnect',
      'MaxClientDisconnect maxClientDisconnectMs dur',
      'ReschedulePolicy reschedulePolicy obj:ReschedulePolicy',
      'Migrate migrate obj:Migrate',
      'Update update obj:Update',
      'Networks networks list:Network',
      'Services services list:Service',
      'Constraints constraints list:Constraint',
      'Affinities affinities list:Affinity',
      'Spreads spreads list:Spread',
    ],
    ignored: ['StopAfterClientDisconnect', 'PreventRescheduleOnLost'],
    unsupported: { Volumes: 'volume', Scaling: 'scaling', Consul: 'consul' },
  },
  Task: {
    mapped: [
      'Name name plain',
      'Driver driver plain',
      'Config config plain',
      'Env env plain',
      'User user str',
      'Leader leader true',
      'Lifecycle lifecycle obj:Lifecycle',
      'KillTimeout killTimeoutMs durSet',
      'KillSignal killSignal str',
      'RestartPolicy restartPolicy obj:RestartPolicy',
      'LogConfig logs obj:LogConfig',
      'Meta meta plain',
      'Resources resources obj:Resources',
      'ShutdownDelay shutdownDelayMs dur',
      'Artifacts artifacts list:Artifact',
      'Services services list:Service',
      'Constraints constraints list:Constraint',
      'Affinities affinities list:Affinity',
      'DispatchPayload dispatchPayload obj:DispatchPayload',
      'Templates templates list:Template',
    ],
    ignored: ['Kind'],
    unsupported: {
      Vault: 'vault',
      Consul: 'consul',
      VolumeMounts: 'volume_mount',
      CSIPluginConfig: 'csi_plugin',
      ScalingPolicies: 'scaling',
      Secrets: 'secret',
      Identity: 'identity',
      Identities: 'identity',
      Actions: 'action',
      Schedule: 'schedule',
    },
  },
  ParameterizedJob: { mapped: ['Payload payload str', 'MetaRequired metaRequired plain', 'MetaOptional metaOptional plain'] },
  DispatchPayload: { mapped: ['File file str'] },
  Template: {
    mapped: [
      'EmbeddedTmpl data str',
      'SourcePath source str',
      'DestPath destination str',
      'ChangeMode changeMode str',
      'ChangeSignal changeSignal str',
      'Splay splayMs dur',
      'Perms perms str',
      'Envvars env true',
      'LeftDelim leftDelimiter str',
      'RightDelim rightDelimiter str',
      'ErrMissingKey errorOnMissingKey true',
      'Once once true',
      'ChangeScript changeScript obj:ChangeScript',
      'Wait wait obj:WaitConfig',
      'Uid uid plain',
      'Gid gid plain',
    ],
    ignored: ['VaultGrace'],
  },
  ChangeScript: {
    mapped: ['Command command str', 'Args args plain', 'Timeout timeoutMs dur', 'FailOnError failOnError true'],
    unsupported: { RunOnFirstRender: 'run_on_first_render' },
  },
  WaitConfig: { mapped: ['Min minMs dur', 'Max maxMs dur'] },
  Periodic: {
    mapped: [
      'Enabled enabled plain',
      'Spec spec str',
      'Specs specs plain',
      'SpecType specType str',
      'ProhibitOverlap prohibitOverlap plain',
      'TimeZone timeZone str',
    ],
  },
  Constraint: {
    mapped: ['LTarget lTarget str', 'RTarget rTarget str', 'Operand operand plain'],
  },
  Affinity: {
    mapped: ['LTarget lTarget str', 'RTarget rTarget str', 'Operand operand plain', 'Weight weight plain'],
  },
  Spread: {
    mapped: ['Attribute attribute plain', 'Weight weight plain', 'SpreadTarget spreadTarget list:SpreadTarget'],
  },
  SpreadTarget: {
    mapped: ['Value value plain', 'Percent percent plain'],
  },
  Lifecycle: {
    mapped: ['Hook hook plain', 'Sidecar sidecar plain'],
  },
  LogConfig: {
    mapped: ['MaxFiles maxFiles plain', 'MaxFileSizeMB maxFileSizeMB plain'],
    ignored: ['Enabled'],
    unsupported: { Disabled: 'logs.disabled' },
  },
  EphemeralDisk: {
    mapped: ['Sticky sticky plain', 'Migrate migrate plain', 'SizeMB sizeMB plain'],
  },
  RestartPolicy: {
    mapped: ['Attempts attempts plain', 'Interval intervalMs durSet', 'Delay delayMs durSet', 'Mode mode plain', 'RenderTemplates renderTemplates true'],
  },
  ReschedulePolicy: {
    mapped: [
      'Attempts attempts plain',
      'Interval intervalMs durSet',
      'Delay delayMs durSet',
      'DelayFunction delayFunction plain',
      'MaxDelay maxDelayMs durSet',
      'Unlimited unlimited plain',
    ],
  },
  Migrate: {
    mapped: [
      'MaxParallel maxParallel plain',
      'HealthCheck healthCheck plain',
      'MinHealthyTime minHealthyTimeMs durSet',
      'HealthyDeadline healthyDeadlineMs durSet',
    ],
  },
  Update: {
    mapped: [
      'MaxParallel maxParallel plain',
      'HealthCheck healthCheck plain',
      'MinHealthyTime minHealthyTimeMs durSet',
      'HealthyDeadline healthyDeadlineMs durSet',
      'ProgressDeadline progressDeadlineMs durSet',
      'AutoRevert autoRevert plain',
      'AutoPromote autoPromote plain',
      'Canary canary plain',
      'Stagger staggerMs durSet',
    ],
  },
  Disconnect: {
    mapped: ['LostAfter lostAfterMs dur', 'StopOnClientAfter stopOnClientAfterMs dur', 'Replace replace plain', 'Reconcile reconcile str'],
  },
  Resources: {
    mapped: ['CPU cpu num', 'Cores cores num', 'MemoryMB memoryMB num', 'MemoryMaxMB memoryMaxMB num', 'DiskMB diskMB num', 'SecretsMB secretsMB num'],
    // Networks (a task-level network) is read by the group: its ports become the group's.
    ignored: ['IOPS', 'Networks'],
    unsupported: { Devices: 'device', NUMA: 'numa' },
  },
  Network: {
    mapped: ['Mode mode str', 'ReservedPorts reservedPorts list:Port', 'DynamicPorts dynamicPorts list:Port'],
    ignored: ['Device', 'CIDR', 'IP', 'Hostname', 'MBits'],
    unsupported: { DNS: 'network.dns', CNI: 'network.cni' },
  },
  Port: {
    mapped: ['Label label plain', 'Value value num', 'To to num', 'HostNetwork hostNetwork str'],
    unsupported: { IgnoreCollision: 'port.ignore_collision' },
  },
  Service: {
    mapped: [
      'Name name plain',
      'PortLabel portLabel str',
      'Tags tags plain',
      'Meta meta plain',
      'AddressMode addressMode str',
      'Address address str',
      'Provider provider str',
      'TaskName taskName str',
      'Checks checks list:Check',
    ],
    ignored: ['CheckRestart', 'OnUpdate', 'Cluster', 'EnableTagOverride', 'Kind'],
    unsupported: {
      Connect: 'connect',
      CanaryTags: 'service.canary_tags',
      CanaryMeta: 'service.canary_meta',
      TaggedAddresses: 'service.tagged_addresses',
      Identity: 'identity',
      Weights: 'service.weights',
    },
  },
  Check: {
    mapped: [
      'Name name str',
      'Type type plain',
      'Path path str',
      'Method method str',
      'Header header plain',
      'Protocol protocol str',
      'PortLabel portLabel str',
      'Command command str',
      'Args args plain',
      'TaskName task str',
      'Interval intervalMs durSet',
      'Timeout timeoutMs durSet',
      'InitialStatus initialStatus str',
      'SuccessBeforePassing successBeforePassing num',
      'FailuresBeforeCritical failuresBeforeCritical num',
      'CheckRestart checkRestart obj:CheckRestart',
    ],
    ignored: ['AddressMode', 'Advertise', 'Notes', 'OnUpdate', 'FailuresBeforeWarning', 'TLSServerName', 'GRPCService', 'GRPCUseTLS'],
    unsupported: { Expose: 'check.expose', TLSSkipVerify: 'check.tls_skip_verify', Body: 'check.body' },
  },
  CheckRestart: {
    mapped: ['Limit limit plain', 'Grace graceMs durSet', 'IgnoreWarnings ignoreWarnings plain'],
  },
  Artifact: {
    mapped: ['GetterSource source plain', 'RelativeDest destination str', 'GetterMode mode str', 'GetterOptions options plain', 'GetterHeaders headers plain'],
    unsupported: { GetterInsecure: 'artifact.insecure', Chown: 'artifact.chown' },
  },
};

/** berth's spelling of a refused Nomad key, in the path of its refusal. */
const CAMEL: Record<string, string> = { CSIPluginConfig: 'csiPluginConfig', NUMA: 'numa', DNS: 'dns', CNI: 'cni' };
const camel = (k: string) => CAMEL[k] ?? k[0]!.toLowerCase() + k.slice(1);

const fields = (type: string) => TABLES[type]!.mapped.map((f) => f.split(' ') as [string, string, string]);

/** A set value of `kind` in Nomad's JSON, and what berth makes of it. */
function setValue(kind: string): [unknown, unknown] {
  const [k, block] = kind.split(':');
  switch (k) {
    case 'plain':
      return [['v'], ['v']];
    case 'str':
      return ['x', 'x'];
    case 'num':
      return [5, 5];
    case 'dur':
    case 'durSet':
      return [2.5e9, 2500];
    case 'time':
      return [1.7e18, 1.7e12];
    case 'true':
      return [true, true];
    case 'obj':
    case 'list': {
      // The block's first key (a task also its config, which it always gets).
      const [n, b, inner] = fields(block!)[0]!;
      const [nv, bv] = setValue(inner);
      const extra = block === 'Task' ? [{ Config: { c: 1 } }, { config: { c: 1 } }] : [{}, {}];
      const [nomad, berth] = [
        { [n]: nv, ...extra[0] },
        { [b]: bv, ...extra[1] },
      ];
      return k === 'obj' ? [nomad, berth] : [[nomad], [berth]];
    }
  }
  throw new Error(`no sample for ${kind}`);
}

/** Nomad's "unset" value of `kind`, and what berth keeps of it (undefined: left out). */
const UNSET: Record<string, [unknown, unknown]> = {
  str: ['', undefined],
  num: [0, undefined],
  dur: [0, undefined],
  durSet: [0, 0],
  time: ['0001-01-01T00:00:00Z', undefined],
  true: [false, undefined],
};

const report = (): FromNomadReport => ({ issues: [], unsupported: [] });
/** What a block always gets whatever its input (a task's config defaults to {}). */
const withFixUps = (type: string, o: object) => (type === 'Task' ? { config: {}, ...o } : o);

describe("model: Nomad's API JSON, key by key", () => {
  it('the tables know exactly the keys listed here', () => {
    const got = nomadTableKeys();
    expect(Object.keys(got)).to.deep.equal(Object.keys(TABLES));
    for (const [type, t] of Object.entries(TABLES)) {
      expect(got[type]!.mapped, type).to.deep.equal(fields(type).map((f) => f[0]));
      expect(got[type]!.ignored, type).to.deep.equal(t.ignored ?? []);
      expect(got[type]!.unsupported, type).to.deep.equal(t.unsupported ?? {});
    }
  });

  for (const type of Object.keys(TABLES)) {
    describe(type, () => {
      it('maps each key to its berth name and unit, and back', () => {
        for (const [n, b, kind] of fields(type)) {
          const r = report();
          const [nv, bv] = setValue(kind);
          const out = fromNomad({ [n]: nv }, type, 'p', r);
          expect(out, `${type}.${n}`).to.deep.include({ [b]: bv });
          expect(r, `${type}.${n}`).to.deep.equal(report());
          expect(toNomad(out, type), `${type}.${n} back`).to.deep.include({ [n]: nv });
        }
      });

      it("leaves out Go's zero value where it means unset, and keeps it where it means something", () => {
        for (const [n, b, kind] of fields(type)) {
          const unset = UNSET[kind];
          if (!unset) continue;
          const out = fromNomad({ [n]: unset[0] }, type, 'p', report()) as Record<string, unknown>;
          expect(out[b], `${type}.${n} = ${JSON.stringify(unset[0])}`).to.equal(unset[1]);
          expect(b in out, `${type}.${n}`).to.equal(unset[1] !== undefined);
        }
      });

      it('a whole block round-trips: Nomad -> berth -> Nomad', () => {
        const nomad = Object.fromEntries(fields(type).map(([n, , kind]) => [n, setValue(kind)[0]]));
        const r = report();
        const berth = fromNomad(nomad, type, 'p', r);
        expect(r).to.deep.equal(report());
        expect(berth).to.deep.equal(withFixUps(type, Object.fromEntries(fields(type).map(([, b, kind]) => [b, setValue(kind)[1]]))));
        expect(toNomad(berth, type)).to.deep.equal(nomad);
      });

      it('accepts its ignored keys and drops them', () => {
        for (const k of TABLES[type]!.ignored ?? []) {
          const r = report();
          expect(fromNomad({ [k]: 'x' }, type, 'p', r), `${type}.${k}`).to.deep.equal(withFixUps(type, {}));
          expect(r, `${type}.${k}`).to.deep.equal(report());
        }
      });

      it('refuses each stanza berth does not run, by name and berth path, unless it is empty', () => {
        for (const [k, stanza] of Object.entries(TABLES[type]!.unsupported ?? {})) {
          for (const set of [true, 'x', 1, [1], { a: 1 }]) {
            const r = report();
            fromNomad({ [k]: set }, type, 'p', r);
            expect(r, `${type}.${k} = ${JSON.stringify(set)}`).to.deep.equal({ issues: [], unsupported: [{ stanza, path: `p.${camel(k)}` }] });
          }
          for (const empty of [undefined, null, false, '', 0, [], {}]) {
            const r = report();
            fromNomad({ [k]: empty }, type, 'p', r);
            expect(r, `${type}.${k} = ${JSON.stringify(empty)}`).to.deep.equal(report());
          }
        }
        expect(unsupportedCamelKeys(type)).to.deep.equal(Object.fromEntries(Object.entries(TABLES[type]!.unsupported ?? {}).map(([k, s]) => [camel(k), s])));
      });

      it('reports an unknown key with a did-you-mean from this block', () => {
        const [n] = fields(type)[0]!;
        const typo = `${n}x`;
        const r = report();
        fromNomad({ [typo]: 1 }, type, 'p', r);
        expect(r.issues).to.deep.equal([`p.${typo}: unknown field "${typo}" (did you mean "${n}"?)`]);
      });
    });
  }

  it('a block that is not an object passes through (the schema then says what is wrong); null is absent', () => {
    expect(fromNomad('x', 'Task', 'p', report())).to.equal('x');
    expect(fromNomad([1], 'Task', 'p', report())).to.deep.equal([1]);
    expect(fromNomad(null, 'Task', 'p', report())).to.equal(undefined);
    expect(fromNomad({ Name: null }, 'Task', 'p', report())).to.deep.equal({ config: {} });
    expect(toNomad('x', 'Task')).to.equal('x');
    expect(fromNomad({ Tasks: 'x' }, 'TaskGroup', 'p', report())).to.deep.equal({ tasks: 'x' });
    expect(toNomad({ tasks: 'x', shutdownDelayMs: 'soon' }, 'TaskGroup')).to.deep.equal({ Tasks: 'x', ShutdownDelay: 'soon' });
    expect(unsupportedCamelKeys('NoSuchBlock')).to.deep.equal({});
    // A value of the wrong type is passed on as it is, for the schema to name.
    expect(fromNomad({ ShutdownDelay: '5s', KillTimeout: true }, 'Task', 'p', report())).to.deep.equal({
      config: {},
      shutdownDelayMs: '5s',
      killTimeoutMs: true,
    });
  });

  it("Nomad's times: zero time and 0 are unset, RFC 3339 and UnixNano become ms, anything else is left for the schema to refuse", () => {
    const cases: Array<[unknown, unknown]> = [
      [undefined, undefined],
      [null, undefined],
      [0, undefined],
      ['0001-01-01T00:00:00Z', undefined],
      ['2026-12-02T12:00:00Z', Date.parse('2026-12-02T12:00:00Z')],
      [1.7e18, 1.7e12],
      ['yesterday', 'yesterday'],
      [true, true],
    ];
    for (const [v, want] of cases) expect(nomadTime(v), String(v)).to.equal(want);
  });

  it('job-level reschedule and migrate blocks are defaults under each group, which keeps its own values', () => {
    const r = report();
    const job = fromNomad(
      {
        Reschedule: { Attempts: 5, Delay: 1e9 },
        Migrate: { MaxParallel: 3 },
        TaskGroups: [{ Name: 'a', ReschedulePolicy: { Attempts: 1 } }, { Name: 'b', Migrate: { MaxParallel: 2 } }, 'not a group'],
      },
      'Job',
      'job',
      r,
    ) as { taskGroups: unknown[] };
    expect(r).to.deep.equal(report());
    expect(job.taskGroups).to.deep.equal([
      { name: 'a', reschedulePolicy: { attempts: 1, delayMs: 1000 }, migrate: { maxParallel: 3 } },
      { name: 'b', reschedulePolicy: { attempts: 5, delayMs: 1000 }, migrate: { maxParallel: 2 } },
      'not a group',
    ]);
    expect(fromNomad({ TaskGroups: [{ Name: 'a' }] }, 'Job', 'job', report())).to.deep.equal({ taskGroups: [{ name: 'a' }] });
  });

  it("the keys of the blocks merged as defaults (the job's reschedule and migrate, a service's check_restart) are checked where they were written", () => {
    const r = report();
    fromNomad({ Reschedule: { Attemptz: 5 }, Migrate: { MaxParalel: 2 } }, 'Job', 'job', r);
    fromNomad({ Name: 's', CheckRestart: { Limitt: 3 } }, 'Service', 'job.taskGroups[0].services[0]', r);
    expect(r.issues).to.deep.equal([
      'job.reschedule.Attemptz: unknown field "Attemptz" (did you mean "Attempts"?)',
      'job.migrate.MaxParalel: unknown field "MaxParalel" (did you mean "MaxParallel"?)',
      'job.taskGroups[0].services[0].checkRestart.Limitt: unknown field "Limitt" (did you mean "Limit"?)',
    ]);
  });

  it("a group's own Migrate and a check's own CheckRestart are checked once, by their tables (no second pass as defaults)", () => {
    const r = report();
    fromNomad({ Name: 'a', Migrate: { MaxParalel: 2 }, ReschedulePolicy: { Attemptz: 1 } }, 'TaskGroup', 'g', r);
    fromNomad({ Name: 'c', CheckRestart: { Limitt: 3 } }, 'Check', 'c', r);
    expect(r.issues).to.deep.equal([
      'g.reschedulePolicy.Attemptz: unknown field "Attemptz" (did you mean "Attempts"?)',
      'g.migrate.MaxParalel: unknown field "MaxParalel" (did you mean "MaxParallel"?)',
      'c.checkRestart.Limitt: unknown field "Limitt" (did you mean "Limit"?)',
    ]);
  });

  it("a group's old StopAfterClientDisconnect becomes disconnect.stopOnClientAfterMs unless the disconnect block sets it", () => {
    const g = (v: object) => fromNomad(v, 'TaskGroup', 'g', report());
    expect(g({ StopAfterClientDisconnect: 3e9 })).to.deep.equal({ disconnect: { stopOnClientAfterMs: 3000 } });
    expect(g({ StopAfterClientDisconnect: 3e9, Disconnect: { StopOnClientAfter: 1e9 } })).to.deep.equal({ disconnect: { stopOnClientAfterMs: 1000 } });
    expect(g({ StopAfterClientDisconnect: 3e9, Disconnect: { Replace: true } })).to.deep.equal({ disconnect: { replace: true, stopOnClientAfterMs: 3000 } });
    expect(g({ StopAfterClientDisconnect: 0 })).to.deep.equal({});
    expect(g({ StopAfterClientDisconnect: '3s' })).to.deep.equal({});
  });

  it("a task's lifecycle with an empty hook is none; a service's check_restart is each check's default", () => {
    expect(fromNomad({ Lifecycle: { Hook: '', Sidecar: false } }, 'Task', 't', report())).to.deep.equal({ config: {} });
    expect(fromNomad({ Lifecycle: { Hook: 'prestart' } }, 'Task', 't', report())).to.deep.equal({ config: {}, lifecycle: { hook: 'prestart' } });
    expect(fromNomad({ Config: { command: 'x' } }, 'Task', 't', report())).to.deep.equal({ config: { command: 'x' } });
    const svc = fromNomad(
      { Name: 's', CheckRestart: { Limit: 3, Grace: 1e9 }, Checks: [{ Type: 'tcp' }, { Type: 'http', CheckRestart: { Limit: 1 } }, 'x'] },
      'Service',
      's',
      report(),
    );
    expect(svc).to.deep.equal({
      name: 's',
      checks: [{ type: 'tcp', checkRestart: { limit: 3, graceMs: 1000 } }, { type: 'http', checkRestart: { limit: 1, graceMs: 1000 } }, 'x'],
    });
    expect(fromNomad({ Name: 's', CheckRestart: { Limit: 3 } }, 'Service', 's', report())).to.deep.equal({ name: 's' });
  });

  it('nested unknown keys and refusals carry the berth path of where they were found', () => {
    const r = report();
    fromNomad({ TaskGroups: [{ Tasks: [{ Name: 't', Vault: { Policies: ['x'] }, Resources: { CPUs: 1 } }] }] }, 'Job', 'job', r);
    expect(r.unsupported).to.deep.equal([{ stanza: 'vault', path: 'job.taskGroups[0].tasks[0].vault' }]);
    expect(r.issues).to.deep.equal(['job.taskGroups[0].tasks[0].resources.CPUs: unknown field "CPUs" (did you mean "CPU"?)']);
  });

  it('an unknown key with no close match lists every key the block knows, and only those', () => {
    const r = report();
    fromNomad({ S: 1 }, 'Port', 'p', r);
    expect(r.issues).to.deep.equal(['p.S: unknown field "S" (known: Label, Value, To, HostNetwork, IgnoreCollision)']);
  });

  it('a null group or check is left for the schema: the job-level defaults and check_restart skip it', () => {
    const job = fromNomad({ Reschedule: { Attempts: 5 }, TaskGroups: [null, { Name: 'a' }] }, 'Job', 'job', report());
    expect(job).to.deep.equal({ taskGroups: [undefined, { name: 'a', reschedulePolicy: { attempts: 5 } }] });
    const svc = fromNomad({ Name: 's', CheckRestart: { Limit: 3 }, Checks: [null, { Type: 'tcp' }] }, 'Service', 's', report());
    expect(svc).to.deep.equal({ name: 's', checks: [undefined, { type: 'tcp', checkRestart: { limit: 3 } }] });
  });

  it('an old StopAfterClientDisconnect that is not a number of ns is ignored (not passed on as a duration)', () => {
    for (const v of [true, '5', [1]]) expect(fromNomad({ StopAfterClientDisconnect: v }, 'TaskGroup', 'g', report()), JSON.stringify(v)).to.deep.equal({});
  });

  it('toNomad passes a time of the wrong type on as it is', () => {
    expect(toNomad({ submitTime: 'yesterday' }, 'Job')).to.deep.equal({ SubmitTime: 'yesterday' });
    expect(toNomad({ submitTime: 1.5 }, 'Job')).to.deep.equal({ SubmitTime: 1_500_000 });
  });

  it("toNomad's plain values are copies: nested configs come back whole, and changing the input later changes nothing", () => {
    const task = { name: 't', config: { command: 'x', opts: { nested: { deep: [1, { a: 'b' }] } } }, meta: { k: 'v' } };
    const out = toNomad(task, 'Task') as { Name: string; Config: Record<string, unknown>; Meta: Record<string, string> };
    expect(out).to.deep.equal({ Name: 't', Config: { command: 'x', opts: { nested: { deep: [1, { a: 'b' }] } } }, Meta: { k: 'v' } });
    task.config.command = 'y';
    task.meta.k = 'w';
    expect(out.Config.command).to.equal('x');
    expect(out.Meta.k).to.equal('v');
  });

  it("a task-level network's ports become the group's network ports; a label already there, or a mode, is refused by name", () => {
    const group = (tasks: unknown[], networks?: unknown[]) => {
      const r: FromNomadReport = { issues: [], unsupported: [] };
      const out = fromNomad({ Name: 'g', ...(networks ? { Networks: networks } : {}), Tasks: tasks }, 'TaskGroup', 'job.taskGroups[0]', r) as any;
      return { out, r };
    };
    const task = (name: string, net: unknown) => ({ Name: name, Driver: 'raw_exec', Resources: { CPU: 10, Networks: [net] } });
    // No group network: one is made, in host mode, with the task's ports.
    const one = group([task('a', { MBits: 10, DynamicPorts: [{ Label: 'http' }], ReservedPorts: [{ Label: 'lb', Value: 9999 }] })]);
    expect(one.r).to.deep.equal({ issues: [], unsupported: [] });
    expect(one.out.networks).to.deep.equal([{ mode: 'host', reservedPorts: [{ label: 'lb', value: 9999 }], dynamicPorts: [{ label: 'http' }] }]);
    expect(one.out.tasks[0].resources).to.deep.equal({ cpu: 10 });
    // With a group network: added to it, after its own ports, task by task.
    const two = group([task('a', { DynamicPorts: [{ Label: 'x' }] }), task('b', { DynamicPorts: [{ Label: 'y' }] })], [{ DynamicPorts: [{ Label: 'admin' }] }]);
    expect(two.out.networks[0].dynamicPorts.map((p: { label: string }) => p.label)).to.deep.equal(['admin', 'x', 'y']);
    // A label the group or an earlier task has: refused, at the task's network.
    const clash = group(
      [task('a', { DynamicPorts: [{ Label: 'admin' }] }), task('b', { ReservedPorts: [{ Label: 'admin', Value: 80 }] })],
      [{ DynamicPorts: [{ Label: 'admin' }] }],
    );
    expect(clash.r.unsupported).to.deep.equal([
      { stanza: 'task network port "admin" that the group or another task also has', path: 'job.taskGroups[0].tasks[0].resources.networks[0]' },
      { stanza: 'task network port "admin" that the group or another task also has', path: 'job.taskGroups[0].tasks[1].resources.networks[0]' },
    ]);
    expect(clash.out.networks[0].dynamicPorts).to.have.length(1);
    expect(clash.out.networks[0].reservedPorts).to.equal(undefined);
    // A bridge network is refused as a group's would be, and gives no ports.
    const bridge = group([task('a', { Mode: 'bridge', DynamicPorts: [{ Label: 'http' }] })]);
    expect(bridge.r.unsupported).to.deep.equal([{ stanza: 'network mode "bridge"', path: 'job.taskGroups[0].tasks[0].resources.networks[0].mode' }]);
    expect(bridge.out.networks).to.equal(undefined);
  });
});
