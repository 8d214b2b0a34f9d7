/**
 * The {@link Runtime} a client's effect actors share, made from its options: clock, bus,
 * drivers, directories, the state store, the service catalog and the template settings.
 * @module
 */
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import { AllocDir } from '../allocdir/alloc-dir.ts';
import { defaultChrootEnv } from '../allocdir/default-chroot.ts';
import { parentCgroupName, type CgroupDetection } from '../cgroups/detect.ts';
import type { Driver } from '../drivers/driver.ts';
import { realHostFs } from '../runner/host-fs.ts';
import type { Runtime } from '../runner/runtime.ts';
import { templateRuntime } from '../runner/template-hook.ts';
import { ServiceCatalog } from '../services/catalog.ts';
import { openStateStore } from '../state/state-store.ts';
import type { ClientOptions } from './types.ts';

/** What {@link clientRuntime} builds on, made before it. */
export interface RuntimeParts {
  bus: Bus;
  clock: Clock;
  drivers: Record<string, Driver>;
  detected: CgroupDetection;
  dataDir: string;
  clientAllocDir: string;
  /** The client's state store file. */
  storePath: string;
  /** Where the store's open says it moved a damaged store aside (the client tells the bus at restore). */
  onRepair(to: string): void;
}

/** The client's runtime; opens its state store. */
export function clientRuntime(options: ClientOptions, parts: RuntimeParts): Runtime {
  const { bus, clock, drivers, detected, dataDir, clientAllocDir, storePath } = parts;
  const catalog = new ServiceCatalog();
  return {
    bus,
    clock,
    random: options.random ?? Math.random,
    drivers,
    chrootEnv: options.chrootEnv && Object.keys(options.chrootEnv).length > 0 ? options.chrootEnv : defaultChrootEnv,
    dataDir,
    clientAllocDir,
    nodeId: options.nodeId ?? 'local',
    ...(options.nodeName ? { nodeName: options.nodeName } : {}),
    ...(options.datacenter ? { datacenter: options.datacenter } : {}),
    ...(options.region ? { region: options.region } : {}),
    ...(options.nodeVariables ? { nodeVariables: options.nodeVariables } : {}),
    ...(detected.ok ? { parentCgroup: parentCgroupName(detected.layout) } : {}),
    maxKillTimeoutMs: options.maxKillTimeoutMs ?? 30_000,
    migrateTimeoutMs: options.migrateTimeoutMs ?? 600_000,
    store: (options.seams?.openStore ?? openStateStore)(storePath, {
      onError: (err) => bus.publish('client.error', { error: err.message }),
      ...(options.repairStateStore ? { repair: true, onRepair: parts.onRepair } : {}),
    }),
    allocDirs: options.seams?.allocDirs ?? ((root, id) => new AllocDir(root, id)),
    fs: options.seams?.fs ?? realHostFs,
    ...(options.rpc ? { rpc: options.rpc } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.migrateToken ? { migrateToken: options.migrateToken } : {}),
    ...(options.tls ? { tls: { ...options.tls } } : {}),
    registry: new Map(),
    services: catalog,
    serviceAddress: options.serviceAddress ?? '127.0.0.1',
    templates: templateRuntime(options, clock, catalog),
  };
}
