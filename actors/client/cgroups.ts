/**
 * The client's cgroups: detected once (a forced mode this machine cannot give throws), the
 * manager the drivers make task cgroups with, and the bus message that says what was found.
 * @module
 */
import type { Bus } from '../../bus/bus.ts';
import { detectCgroups, type CgroupDetection } from '../cgroups/detect.ts';
import { createCgroupManager, type CgroupManager } from '../cgroups/manager.ts';
import type { ClientOptions } from './types.ts';

/** What {@link clientCgroups} found, and what the drivers get: the manager, or why there is none. */
export interface ClientCgroups {
  detected: CgroupDetection;
  cgroups: CgroupManager | { unavailable: string };
}

/** Detects the client's cgroups; throws for a forced mode (v1, v2) this machine cannot give, 'auto' falls back to none. */
export function clientCgroups(options: ClientOptions): ClientCgroups {
  const detected = detectCgroups(options.cgroups);
  const cgroups = detected.ok
    ? createCgroupManager(detected.layout, { ...(options.cgroups?.pidsLimit ? { pidsLimit: options.cgroups.pidsLimit } : {}) })
    : { unavailable: detected.reason };
  return { detected, cgroups };
}

/** Publishes `cgroups.detected` once the caller had the chance to subscribe (the bus drops unheard messages). */
export function announceCgroups(bus: Bus, detected: CgroupDetection): void {
  queueMicrotask(() =>
    bus.publish(
      'cgroups.detected',
      detected.ok
        ? {
            version: detected.layout.version,
            controllers: detected.layout.controllers,
            parent: Object.values(detected.layout.parents)[0]!,
            message: detected.summary,
          }
        : { version: null, controllers: [], message: `no cgroups: ${detected.reason}`, ...(detected.detail ? { detail: detected.detail } : {}) },
    ),
  );
}
