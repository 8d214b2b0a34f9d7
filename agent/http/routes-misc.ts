/**
 * The agent's own endpoints: `/v1/status/leader`, `/v1/status/peers`, `/v1/agent/self`,
 * `/v1/agent/members`, `/v1/regions`, `/v1/services`, `/v1/service/:name`,
 * `/v1/operator/scheduler/configuration`, `/v1/operator/raft/configuration`, `/v1/system/gc`,
 * `/v1/acl/bootstrap`, `/v1/acl/token/self`.
 * @module
 */
import type { AgentCore } from '../core.ts';
import { ApiError } from './errors.ts';
import { PREEMPTION_KEYS, type PreemptionConfig } from '../config/preemption.ts';
import { secretMatches } from '../../index.ts';
import { aclResetIndex, managementTokenInfo } from '../state/acl-token.ts';
import type { AgentState } from '../state/store.ts';
import { requestToken } from './edge.ts';
import { blocking } from './blocking.ts';
import { decodeBody, schedulerConfigBody } from './bodies.ts';
import { apiSchedulerConfig, ZERO_TIME } from './encode.ts';
import { ANONYMOUS, type Router } from './router.ts';
import type { ServiceRegistration } from '../../index.ts';

/** Nomad's pseudo-token of every request when ACLs are off (`structs.ACLsDisabledToken`). */
export const ACLS_DISABLED_TOKEN = Object.freeze(aclToken({ AccessorID: 'acls-disabled', Name: 'ACLs disabled token', Type: 'client' }));
/** Nomad's token of a request that carries none (`structs.AnonymousACLToken`). */
export const ANONYMOUS_TOKEN = Object.freeze(aclToken({ AccessorID: 'anonymous', Name: 'Anonymous Token', Type: 'client', Policies: ['anonymous'] }));

/** Nomad's `ACLToken`, every field, from the ones given. */
function aclToken(t: {
  AccessorID: string;
  Name: string;
  Type: string;
  SecretID?: string;
  Policies?: string[];
  Global?: boolean;
  CreateTime?: string;
  CreateIndex?: number;
}) {
  return {
    AccessorID: t.AccessorID,
    SecretID: t.SecretID ?? '',
    Name: t.Name,
    Type: t.Type,
    Policies: t.Policies ?? null,
    Roles: null,
    Global: t.Global ?? false,
    CreateTime: t.CreateTime ?? ZERO_TIME,
    CreateIndex: t.CreateIndex ?? 0,
    ModifyIndex: t.CreateIndex ?? 0,
  };
}

/** The management token as Nomad's `ACLToken` (Nomad names the bootstrap's "Bootstrap Token"). */
function apiManagementToken(state: AgentState, secret: string) {
  const info = managementTokenInfo(state);
  return aclToken({
    AccessorID: info?.accessorId ?? '',
    SecretID: secret,
    Name: 'Bootstrap Token',
    Type: 'management',
    Global: true,
    CreateTime: info?.createTime ? new Date(info.createTime).toISOString() : ZERO_TIME,
    CreateIndex: info?.createIndex ?? 0,
  });
}

/** What the agent says about itself (address, token) at request time. */
export interface AgentSelf {
  httpAddr: () => string;
  /** The management token, when ACLs are on. */
  managementToken: () => string | undefined;
  /** Marks the bootstrap done; false when it already was. */
  bootstrap: () => boolean;
}

/** The client's service catalog, when this berth has one. */
function services(core: AgentCore): ServiceRegistration[] {
  const c = core.client as { services?: () => ServiceRegistration[] };
  return c.services?.() ?? [];
}

const apiRegistration = (s: ServiceRegistration) => ({
  ID: s.id,
  ServiceName: s.serviceName,
  Namespace: s.namespace,
  NodeID: s.nodeId,
  Datacenter: s.datacenter,
  JobID: s.jobId,
  AllocID: s.allocId,
  Tags: s.tags,
  Address: s.address,
  Port: s.port,
  CreateIndex: s.createIndex ?? 0,
  ModifyIndex: s.modifyIndex ?? 0,
});

/** Adds the agent, status, operator, service and ACL routes. */
export function miscRoutes(r: Router, core: AgentCore, self: AgentSelf): void {
  const { state, config } = core;
  r.on('GET', '/v1/status/leader', ANONYMOUS, () => ({ body: self.httpAddr() }));
  r.on('GET', '/v1/status/peers', ANONYMOUS, () => ({ body: [self.httpAddr()] }));
  r.on('GET', '/v1/regions', ANONYMOUS, () => ({ body: [config.region] }));
  const member = () => {
    const [addr, port] = self.httpAddr().split(':');
    return {
      Name: `${config.name}.${config.region}`,
      Addr: addr,
      Port: Number(port),
      Tags: { region: config.region, dc: config.datacenter, role: 'berth' },
      Status: 'alive',
      // The gossip protocol versions of the serf and memberlist libraries Nomad's servers run.
      ProtocolMin: 1,
      ProtocolMax: 5,
      ProtocolCur: 2,
      DelegateMin: 2,
      DelegateMax: 5,
      DelegateCur: 4,
    };
  };
  r.on('GET', '/v1/agent/self', () => ({
    body: {
      config: {
        Region: config.region,
        Datacenter: config.datacenter,
        NodeName: config.name,
        DataDir: config.dataDir,
        BindAddr: config.bindAddr,
        Ports: { HTTP: config.httpPort },
        DevMode: config.dev,
        ACL: { Enabled: config.acl.enabled },
        TLSConfig: { EnableHTTP: config.tls.http },
        Client: { Enabled: true, NodeID: state.node?.id },
        Server: { Enabled: true },
        Version: { Version: 'berth' },
      },
      member: member(),
      stats: { nomad: { leader: 'true', server: 'true' }, client: { node_id: state.node?.id, known_servers: self.httpAddr() } },
    },
  }));
  r.on('GET', '/v1/agent/members', () => ({
    body: { ServerName: config.name, ServerRegion: config.region, ServerDC: config.datacenter, Members: [member()] },
  }));
  r.on('GET', '/v1/agent/health', ANONYMOUS, () => ({ body: { client: { ok: true, message: 'ok' }, server: { ok: true, message: 'ok' } } }));
  r.on(
    'GET',
    '/v1/services',
    blocking(
      state,
      ['services', 'allocs'],
      () => {
        const byNs = new Map<string, Map<string, Set<string>>>();
        for (const s of services(core)) {
          const ns = byNs.get(s.namespace) ?? new Map<string, Set<string>>();
          byNs.set(s.namespace, ns);
          const tags = ns.get(s.serviceName) ?? new Set<string>();
          ns.set(s.serviceName, tags);
          for (const t of s.tags) tags.add(t);
        }
        return [...byNs].map(([ns, m]) => ({ Namespace: ns, Services: [...m].map(([name, tags]) => ({ ServiceName: name, Tags: [...tags] })) }));
      },
      false,
    ),
  );
  r.on(
    'GET',
    '/v1/service/:name',
    blocking(
      state,
      ['services', 'allocs'],
      (req) =>
        services(core)
          .filter((s) => s.serviceName === req.params.name)
          .map(apiRegistration),
      false,
    ),
  );
  r.on(
    'GET',
    '/v1/operator/scheduler/configuration',
    blocking(state, ['scheduler'], () => ({
      SchedulerConfig: apiSchedulerConfig(state.schedulerConfig!),
      Index: state.schedulerConfig!.modifyIndex,
      KnownLeader: true,
      LastContact: 0,
    })),
  );
  // One server, the leader and a voter: this agent (berth speaks no raft; the address is its HTTP one).
  r.on('GET', '/v1/operator/raft/configuration', () => ({
    body: {
      Servers: [
        {
          ID: state.node?.id ?? '',
          Node: `${config.name}.${config.region}`,
          Address: self.httpAddr(),
          Leader: true,
          Voter: true,
          RaftProtocol: '3',
        },
      ],
      Index: state.node?.createIndex ?? 0,
    },
  }));
  const setConfig = async (req: Parameters<Parameters<Router['on']>[2]>[0]) => {
    const body = await decodeBody(req, schedulerConfigBody);
    // Settings berth's one-node scheduler has no use for: the value its GET answers, or a refusal.
    if (body.SchedulerAlgorithm === 'spread') throw new ApiError(400, 'SchedulerAlgorithm: "spread" is not supported by berth (one node: binpack only)');
    for (const k of ['MemoryOversubscriptionEnabled', 'RejectJobRegistration', 'PauseEvalBroker'] as const)
      if (body[k] === true) throw new ApiError(400, `${k}: true is not supported by berth's agent`);
    const p: Record<string, boolean | undefined> = body.PreemptionConfig ?? {};
    const patch: Partial<PreemptionConfig> = {};
    for (const { api, field } of PREEMPTION_KEYS) {
      if (p[api] !== undefined) patch[field] = p[api];
    }
    // Nomad's check-and-set: `?cas=N` applies only while the config's ModifyIndex is N.
    const casText = req.query.get('cas');
    if (casText !== null && !/^\d+$/.test(casText)) throw new ApiError(400, `Error parsing cas value: ${JSON.stringify(casText)} is not an index`);
    const { updated, index } = core.setPreemption(patch, casText === null ? undefined : Number(casText));
    return { body: { Updated: updated, Index: index }, index };
  };
  r.on('POST', '/v1/operator/scheduler/configuration', setConfig);
  // Nomad's forced GC: every terminal evaluation, allocation, deployment and dead job, whatever its age.
  r.on('PUT', '/v1/system/gc', async () => {
    await core.gc.run({ force: true });
    return { body: null };
  });
  r.on('POST', '/v1/acl/bootstrap', ANONYMOUS, () => {
    const token = self.managementToken();
    if (!token) throw new ApiError(400, 'ACL support disabled');
    // Nomad's refusal, with the index a reset file must name (docs/security.md).
    if (!self.bootstrap()) throw new ApiError(400, `ACL bootstrap already done (reset index: ${aclResetIndex(state)})`);
    return { body: apiManagementToken(state, token) };
  });
  // Nomad's WhoAmI: the token the request carries. Anyone may ask (an unknown token is told so);
  // with ACLs off every request is Nomad's "ACLs disabled" pseudo-token, without one the anonymous one.
  r.on('GET', '/v1/acl/token/self', ANONYMOUS, (req) => {
    const secret = self.managementToken();
    if (!secret) return { body: ACLS_DISABLED_TOKEN, index: 0 };
    const given = requestToken(req.raw);
    if (given === '') return { body: ANONYMOUS_TOKEN, index: 0 };
    if (!secretMatches(given, secret)) throw new ApiError(403, 'ACL token not found');
    const body = apiManagementToken(state, secret);
    return { body, index: body.ModifyIndex };
  });
}
