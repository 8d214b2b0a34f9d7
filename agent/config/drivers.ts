/**
 * Which drivers the node offers, from the client's driver fingerprints and the agent file:
 * detected and healthy ones, less raw_exec when `plugin "raw_exec" { config { enabled = false } }`
 * says so. Pure: the agent fingerprints, this decides.
 * @module
 */
import type { DriverFingerprint } from '../../index.ts';
import type { PluginsConfig } from './plugins.ts';

/** The drivers the node offers, and the fingerprints the node API shows. */
export interface NodeDrivers {
  /** Detected, healthy and enabled: what the scheduler places on. */
  drivers: string[];
  /** Every driver's fingerprint (a disabled raw_exec as undetected, as Nomad shows it). */
  health: Record<string, DriverFingerprint>;
  /** The `driver.*` attributes of the offered drivers. */
  attributes: Record<string, string>;
}

/** From the client's fingerprints (`client.fingerprintDrivers()`) and the plugin blocks. */
export function nodeDrivers(fingerprints: Record<string, DriverFingerprint>, plugins: PluginsConfig): NodeDrivers {
  const health: Record<string, DriverFingerprint> = { ...fingerprints };
  if (plugins.rawExecEnabled === false && health.raw_exec) health.raw_exec = { detected: false, healthy: false, healthDescription: 'disabled', attributes: {} };
  const drivers = Object.keys(health)
    .filter((d) => health[d]!.detected && health[d]!.healthy)
    .sort();
  const attributes: Record<string, string> = {};
  for (const d of drivers) Object.assign(attributes, { [`driver.${d}`]: '1' }, health[d]!.attributes);
  return { drivers, health, attributes };
}

/** Whether two fingerprints differ in what the node reports (drivers, health, attributes). */
export function driversChanged(a: NodeDrivers, b: NodeDrivers): boolean {
  return JSON.stringify([a.drivers, a.health, a.attributes]) !== JSON.stringify([b.drivers, b.health, b.attributes]);
}
