/**
 * The client's drivers: the built-in ones (mock, raw_exec, exec, docker) beside the host's own,
 * the check of an allocation's tasks against them, and their fingerprints.
 * @module
 */
import { join } from 'node:path';
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import { errorText } from '../../model/error-text.ts';
import type { Allocation } from '../../model/types.ts';
import type { CgroupManager } from '../cgroups/manager.ts';
import { createDockerDriver } from '../drivers/docker/docker-driver.ts';
import type { Driver, DriverFingerprint } from '../drivers/driver.ts';
import { createExecDriver } from '../drivers/exec.ts';
import { createMockDriver } from '../drivers/mock.ts';
import { createRawExecDriver } from '../drivers/raw-exec.ts';
import type { ClientOptions } from './types.ts';

/** The drivers a client runs tasks with: the built-in ones, then `options.drivers` (which may replace them). */
export function clientDrivers(
  options: ClientOptions,
  parts: { dataDir: string; clock: Clock; bus: Bus; cgroups: CgroupManager | { unavailable: string } },
): Record<string, Driver> {
  const { dataDir, clock, bus, cgroups } = parts;
  return {
    mock_driver: createMockDriver({ clock }),
    // One supervisor for both (its socket and log in the client's data dir).
    raw_exec: createRawExecDriver({ cgroups, supervisorDir: join(dataDir, 'client', 'supervisor') }),
    exec: createExecDriver({ cgroups, supervisorDir: join(dataDir, 'client', 'supervisor') }),
    docker: createDockerDriver({ ...options.docker, clock, onError: (error) => bus.publish('client.error', { error }) }),
    ...(options.drivers ?? {}),
  };
}

/** Checks every task's driver exists and accepts its config; returns `path: problem` lines. */
export function driverIssues(alloc: Allocation, drivers: Readonly<Record<string, Driver>>): string[] {
  const issues: string[] = [];
  const gi = alloc.job.taskGroups.findIndex((g) => g.name === alloc.taskGroup);
  const group = alloc.job.taskGroups[gi]!;
  group.tasks.forEach((t, ti) => {
    const path = `job.taskGroups[${gi}].tasks[${ti}]`;
    const d = drivers[t.driver];
    if (!d) {
      issues.push(`${path}.driver: unknown driver ${JSON.stringify(t.driver)} (have ${Object.keys(drivers).sort().join(', ')})`);
      return;
    }
    try {
      d.validateConfig(t);
    } catch (e) {
      issues.push(`${path}.config: ${errorText(e)}`);
    }
  });
  return issues;
}

/** Each driver's fingerprint by name; one without a fingerprint is detected and healthy, one whose fingerprint throws is neither. */
export async function fingerprintDrivers(drivers: Readonly<Record<string, Driver>>): Promise<Record<string, DriverFingerprint>> {
  const entries = await Promise.all(
    Object.entries(drivers).map(async ([name, d]): Promise<[string, DriverFingerprint]> => [
      name,
      d.fingerprint
        ? await d.fingerprint().catch((e: unknown) => ({ detected: false, healthy: false, healthDescription: errorText(e), attributes: {} }))
        : { detected: true, healthy: true, healthDescription: 'Healthy', attributes: { [`driver.${name}`]: '1' } },
    ]),
  );
  return Object.fromEntries(entries);
}
