/**
 * `startAgent`: one process holding the jobs, placing them, running them and serving Nomad's
 * HTTP API, as `nomad agent -dev` does for one machine. It embeds berth through its public API
 * only: a client (restored on start), an evaluation broker and the server half's state.
 *
 * ```
 *  HTTP ──► AgentCore ──commit──► AgentState (SQLite, <data_dir>/server/state.db)
 *              │                       ▲
 *              └─► EvalBroker ──plan──►│──► client.addAlloc / updateAlloc
 *                                      └─── client.updates$ (client status, task states)
 * ```
 * @module
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Subscription } from 'rxjs';
import {
  createClient,
  errorText,
  NomadHttpRPC,
  nodeVariablesOf,
  type Allocation,
  type Client,
  type ClientOptions,
  type Clock,
  type VariableSource,
} from '../index.ts';
import { reconcileClient } from './broker/broker.ts';
import type { AgentConfig } from './config/config.ts';
import { driversChanged, nodeDrivers, type NodeDrivers } from './config/drivers.ts';
import { nodeAttributes, readHost } from './config/fingerprint.ts';
import { detectCpuMHz, detectMemoryMB } from './config/node-resources.ts';
import { AgentCore } from './core.ts';
import { PortInUseError, portHolder } from './http/port-owner.ts';
import type { RouteInfo } from './http/router.ts';
import { serveApi, type ApiServer } from './http/server.ts';
import { OneTimeCodes } from './http/one-time-codes.ts';
import { managementToken } from './state/acl-token.ts';
import { agentStateError } from './state/damaged-state.ts';
import { markDevDir, sweepDeadDevAgents } from './state/dev-sweep.ts';
import { lockDataDir, type DataDirLock } from './state/data-dir-lock.ts';
import { AgentState } from './state/store.ts';
import type { NodeRecord } from './state/types.ts';
import { Keyring, keystoreDir } from './variables/keyring.ts';
import { storeVariableSource } from './variables/source.ts';
import { VariableStore } from './variables/variables.ts';

/** A running agent. */
export interface Agent {
  /** The API's base URL. */
  readonly url: string;
  readonly config: AgentConfig;
  readonly core: AgentCore;
  readonly client: Client;
  /** The management token when ACLs are on. */
  readonly token: string | undefined;
  /** The API's route table: every path and method it serves, with who may call it. */
  readonly routes: readonly RouteInfo[];
  /** The encrypted variable store, and the source the client's templates read it through. */
  readonly variables: { readonly store: VariableStore; readonly source: VariableSource };
  /**
   * Stops serving and stops the client's actors. Tasks keep running (the next agent on the same
   * data dir reattaches to them), except in `-dev` mode, where every alloc is destroyed and the
   * temp data dir removed, as Nomad's dev agent does.
   */
  close(): Promise<void>;
}

/** Options of {@link startAgent}. */
export interface StartAgentOptions {
  /** Where the agent's log lines go (default: stderr). */
  log?: (line: string) => void;
  /** Extra client options (drivers for specs, an inspector). */
  client?: Partial<ClientOptions>;
  /** How often idle follow and event streams send a heartbeat frame (default 10 s, Nomad's). */
  streamHeartbeatMs?: number;
  /** The server GC's clock: its time and its `job_gc_interval` timer (specs advance it). */
  gcClock?: Clock;
  /** The periodic dispatcher's clock (specs advance it). */
  periodicClock?: Clock;
  /** How often drivers are fingerprinted again (default {@link DRIVER_FINGERPRINT_INTERVAL_MS}). */
  fingerprintIntervalMs?: number;
  /** A number in [0, 1) for each dynamic port pick (default `Math.random`; specs seed it). */
  random?: () => number;
  /** The ports held on the host now (default: read from /proc/net). */
  hostPorts?: () => number[];
}

/** Nomad's client fingerprints its drivers again every 30 s. */
export const DRIVER_FINGERPRINT_INTERVAL_MS = 30_000;

/** Starts an agent with `config` (see `resolveAgentConfig`). */
export async function startAgent(config: AgentConfig, opts: StartAgentOptions = {}): Promise<Agent> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${new Date().toISOString()} [agent] ${line}\n`));
  const tempDir = config.dev && !config.dataDir ? mkdtempSync(join(tmpdir(), 'berth-dev-')) : undefined;
  const cfg: AgentConfig = tempDir ? { ...config, dataDir: tempDir } : config;
  // The lock comes before any state is opened: a second agent on this dir must touch nothing.
  let dirLock: DataDirLock | undefined;
  let state: AgentState;
  try {
    dirLock = lockDataDir(cfg.dataDir);
    // Marked only once locked: a sweep never sees a marked dir whose agent is still starting.
    if (tempDir) markDevDir(tempDir);
    state = new AgentState(join(cfg.dataDir, 'server', 'state.db'));
  } catch (e) {
    dirLock?.release();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    throw e;
  }
  const lock = dirLock;
  let client: Client | undefined;
  let api: ApiServer | undefined;
  const subs: Subscription[] = [];
  try {
    // The node keeps its id across restarts; its resources are read afresh.
    const prevNode = state.node;
    const token = cfg.acl.enabled ? managementToken(state, join(cfg.dataDir, 'server'), log) : undefined;
    state.commit((txn) => {
      if (!state.schedulerConfig) txn.putSchedulerConfig({ preemption: { ...cfg.preemption }, createIndex: txn.index, modifyIndex: txn.index });
    });
    const nodeId = prevNode?.id ?? randomUUID();
    // Variables: sealed in the state with the keyring's active key (made at the first start).
    const variables = new VariableStore(state, Keyring.open(keystoreDir(cfg.dataDir), state, log));
    // With ACLs off Nomad lets a task read any variable; with them on, its implicit workload rule holds.
    const variableSource = storeVariableSource(variables, { workloadRule: cfg.acl.enabled });
    client = createClient({
      dataDir: cfg.dataDir,
      nodeId,
      nodeName: cfg.name,
      datacenter: cfg.datacenter,
      region: cfg.region,
      // `${attr.cpu.arch}`, `${meta.rack}` ... in a task's env and artifacts: the node as last registered.
      nodeVariables: () => (state.node ? nodeVariablesOf(state.node) : {}),
      ...(cfg.client.servers?.length ? { rpc: new NomadHttpRPC({ address: cfg.client.servers[0]! }) } : {}),
      ...(cfg.client.chrootEnv ? { chrootEnv: cfg.client.chrootEnv } : {}),
      ...(cfg.client.gcIntervalMs !== undefined ? { gcIntervalMs: cfg.client.gcIntervalMs } : {}),
      ...(cfg.client.gcDiskUsageThreshold !== undefined ? { gcDiskUsageThreshold: cfg.client.gcDiskUsageThreshold } : {}),
      ...(cfg.client.gcInodeUsageThreshold !== undefined ? { gcInodeUsageThreshold: cfg.client.gcInodeUsageThreshold } : {}),
      ...(cfg.client.gcMaxAllocs !== undefined ? { gcMaxAllocs: cfg.client.gcMaxAllocs } : {}),
      ...(cfg.client.gcParallelDestroys !== undefined ? { gcParallelDestroys: cfg.client.gcParallelDestroys } : {}),
      ...(cfg.repairState ? { repairStateStore: true } : {}),
      ...(cfg.client.template ? { templates: cfg.client.template } : {}),
      // The docker driver's client side; given, the client also removes dangling containers at restore.
      docker: { plugin: cfg.plugins.docker ?? {} },
      variables: variableSource,
      ...opts.client,
    });
    // The drivers the node offers: berth's own and any the host registered, as each fingerprints
    // (docker only when its Engine answers), fingerprinted again every fingerprintIntervalMs.
    const theClientForFp = client;
    const fingerprint = async () => nodeDrivers(await theClientForFp.fingerprintDrivers(), cfg.plugins);
    let offered = await fingerprint();
    const core = new AgentCore(cfg, state, client, log, {
      ...(opts.gcClock ? { gcClock: opts.gcClock } : {}),
      ...(opts.periodicClock ? { periodicClock: opts.periodicClock } : {}),
      ...(opts.random ? { random: opts.random } : {}),
      ...(opts.hostPorts ? { hostPorts: opts.hostPorts } : {}),
    });
    // The client's reports land in paced commits (AgentCore.queueClientUpdate): one per turn at most, one each 50 ms in a burst.
    subs.push(client.updates$.subscribe((a) => core.queueClientUpdate(a)));
    subs.push(
      client.bus.messages$.subscribe((m) => {
        if (m.type === 'watcher.waiting') log(`alloc ${m.allocId.slice(0, 8)} waits for ${m.role} alloc ${m.watchedAllocId.slice(0, 8)} (${m.mode})`);
        else if (m.type === 'watcher.released') log(`alloc ${m.allocId.slice(0, 8)} released from waiting on ${m.watchedAllocId.slice(0, 8)}`);
        else if (m.type === 'client.error') log(`client: ${m.error}`);
      }),
    );
    await client.restore();
    const lost: Allocation[] = [];
    reconcileClient(state, client, log, (a) => lost.push(a));
    core.clientUpdates(client.runners().map((r) => r.alloc()));

    let viewer: Promise<{ url: string }> | undefined;
    const uiCodes = new OneTimeCodes();
    api = await serveApi(core, {
      ...(token ? { token } : {}),
      // The agent made (and logged) its management token at start: the bootstrap is done.
      bootstrap: () => false,
      // The viewer gets a token of its own (never the management token) and takes /ui's one-time codes.
      viewerUrl: async () => {
        viewer ??= client!.serveViewer({
          host: cfg.bindAddr,
          port: 0,
          ...(token ? { token: randomUUID(), redeemCode: (c: string) => uiCodes.redeem(c) } : {}),
        });
        return (await viewer).url;
      },
      viewerCode: () => uiCodes.issue(),
      variables,
      ...(opts.streamHeartbeatMs !== undefined ? { streamHeartbeatMs: opts.streamHeartbeatMs } : {}),
    }).catch((e: unknown) => {
      if ((e as { code?: string }).code === 'EADDRINUSE') throw new PortInUseError(cfg.bindAddr, cfg.httpPort, portHolder(cfg.httpPort));
      throw e;
    });
    const apiAddr = api.addr;
    const cpuMHz = cfg.client.cpuTotalCompute ?? detectCpuMHz();
    const cores = Math.max(1, availableParallelism());
    const memoryMB = cfg.client.memoryTotalMB ?? detectMemoryMB();
    const ip = apiAddr.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    const host = readHost();
    const attributesOf = (d: NodeDrivers) => ({ ...nodeAttributes(host, { cpuMHz, cores, memoryMB, ip, drivers: d.drivers }), ...d.attributes });
    const attributes = attributesOf(offered);
    state.commit((txn) => {
      const node: NodeRecord = {
        id: nodeId,
        secretId: prevNode?.secretId ?? randomUUID(),
        name: cfg.name,
        datacenter: cfg.datacenter,
        region: cfg.region,
        httpAddr: apiAddr,
        tlsEnabled: cfg.tls.http,
        status: 'ready',
        cpuMHz,
        cores,
        memoryMB,
        diskMB: 100 * 1024,
        reserved: { cpu: cfg.client.reserved.cpu, memoryMB: cfg.client.reserved.memoryMB, diskMB: cfg.client.reserved.diskMB },
        ...(cfg.client.reserved.reservedPorts ? { reservedPorts: cfg.client.reserved.reservedPorts } : {}),
        ...(cfg.client.minDynamicPort !== undefined ? { minDynamicPort: cfg.client.minDynamicPort } : {}),
        ...(cfg.client.maxDynamicPort !== undefined ? { maxDynamicPort: cfg.client.maxDynamicPort } : {}),
        statusUpdatedAt: Date.now(),
        driversUpdatedAt: Date.now(),
        drivers: offered.drivers,
        driverHealth: offered.health,
        attributes,
        meta: cfg.client.meta ?? {},
        nodeClass: cfg.client.nodeClass ?? '',
        nodePool: cfg.client.nodePool ?? 'default',
        createIndex: prevNode?.createIndex ?? txn.index,
        modifyIndex: txn.index,
      };
      txn.putNode(node);
      txn.event({ topic: 'Node', type: 'NodeRegistration', key: node.id, object: node });
    });
    core.resumeEvals();
    // Once the node is registered again: the scheduler replaces what the client lost.
    core.allocsLost(lost);
    core.gc.start();
    // Periodic jobs: a launch missed while no agent ran is made once, then each on its schedule.
    core.periodic.start();
    // Drivers come and go (an Engine started or stopped): the node is registered again with what
    // changed, and blocked evals are retried when a driver appeared, as Nomad's client re-registers.
    let fingerprinting = false;
    const refingerprint = setInterval(() => {
      if (fingerprinting) return;
      fingerprinting = true;
      void fingerprint()
        .then((now) => {
          if (!driversChanged(offered, now) || !state.node) return;
          const gained = now.drivers.some((d) => !offered.drivers.includes(d));
          const lost = offered.drivers.filter((d) => !now.drivers.includes(d));
          offered = now;
          state.commit((txn) => {
            const node: NodeRecord = {
              ...state.node!,
              drivers: now.drivers,
              driverHealth: now.health,
              driversUpdatedAt: Date.now(),
              attributes: attributesOf(now),
              modifyIndex: txn.index,
            };
            txn.putNode(node);
            txn.event({ topic: 'Node', type: 'NodeRegistration', key: node.id, object: node });
          });
          log(`drivers: ${now.drivers.join(', ')}${lost.length ? ` (lost ${lost.join(', ')})` : ''}`);
          if (gained) core.broker.unblock();
        })
        .catch((e: unknown) => log(`driver fingerprint: ${errorText(e)}`))
        .finally(() => (fingerprinting = false));
    }, opts.fingerprintIntervalMs ?? DRIVER_FINGERPRINT_INTERVAL_MS);
    refingerprint.unref();
    // What dead dev agents left on this machine, cleaned in the background (close waits for it).
    const sweep = sweepDeadDevAgents(tmpdir(), log);
    log(`berth agent started: ${api.url} (data dir ${cfg.dataDir}, node ${nodeId.slice(0, 8)}${cfg.dev ? ', dev mode' : ''})`);
    if (token) log(`ACLs enabled; management token: ${token}`);

    const theClient = client;
    const theApi = api;
    let closing: Promise<void> | undefined;
    return {
      url: api.url,
      config: cfg,
      core,
      client,
      token,
      routes: api.routes,
      variables: { store: variables, source: variableSource },
      close: () =>
        (closing ??= (async () => {
          clearInterval(refingerprint);
          await theApi.close();
          await sweep;
          await core.stop();
          if (cfg.dev) await Promise.allSettled(theClient.runners().map((r) => r.destroy()));
          for (const s of subs) s.unsubscribe();
          await theClient.shutdown();
          state.close();
          lock.release();
          if (tempDir) rmSync(tempDir, { recursive: true, force: true });
        })()),
    };
  } catch (e) {
    for (const s of subs) s.unsubscribe();
    await api?.close();
    await client?.shutdown();
    state.close();
    lock.release();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    // The library's advice names a createClient option; the agent's names its flag.
    throw agentStateError(e);
  }
}
