/**
 * A way forward for each stanza berth refuses: what berth offers instead, or "not yet" where it
 * is planned. `berth job run|plan|validate` print the hint under the refusal, once per stanza,
 * with the flag that runs the job without what berth refuses.
 * @module
 */
import type { UnsupportedStanza } from '../../../model/errors.ts';

/** Hints by stanza name (`UnsupportedStanza.stanza`; drivers and modes by their first word). */
const HINTS: Record<string, string> = {
  vault: 'berth has no Vault; hand secrets to the task through env or a file in its secrets/ dir',
  consul: 'berth has no Consul; services register with provider = "nomad"',
  connect: 'berth has no service mesh; publish the port with network { port "..." {} } and a nomad service',
  identity: 'berth issues no workload identities yet',
  periodic: 'not yet; meanwhile run the job from cron with berth job run',
  parameterized: 'not yet; meanwhile register one job per run with its values as variables (-var)',
  dispatch_payload: 'not yet (it goes with parameterized jobs)',
  multiregion: 'one node, one region: remove the multiregion block',
  scaling: 'berth runs no autoscaler: set count in the group',
  volume: 'not yet: no host or CSI volumes; keep data in the alloc dir (ephemeral_disk { sticky = true, migrate = true })',
  volume_mount: 'not yet: no host or CSI volumes; keep data in the alloc dir (ephemeral_disk { sticky = true, migrate = true })',
  csi_plugin: 'berth runs no CSI plugins',
  device: 'berth schedules no devices (GPUs and the like)',
  numa: 'berth does not place tasks on NUMA nodes',
  driver: 'berth runs raw_exec (a command on the host), exec (a command in a chroot) and, embedded as a library, docker',
  network: 'tasks share the host network in berth (mode "host"); remove mode, or use ports with network { port "..." {} }',
};

/** The hint for one refused stanza, or a generic "not yet". */
export function refusalHint(stanza: string): string {
  const exact = HINTS[stanza];
  if (exact) return exact;
  // `driver "docker"`, `network mode "bridge"`, `service provider "consul"`, `check type "grpc"`.
  const first = stanza.split(/[ .]/)[0]!;
  return HINTS[first] ?? 'not yet in berth';
}

/**
 * Hint lines for the refusals of one job file: one per distinct stanza, then how to run the job
 * without the stanzas that may be left out (a refused driver cannot be: its task could not run).
 */
export function refusalHintLines(refused: UnsupportedStanza[], command: string, file: string): string[] {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const u of refused) {
    if (seen.has(u.stanza)) continue;
    seen.add(u.stanza);
    lines.push(`${u.stanza}: ${refusalHint(u.stanza)}`);
  }
  if (refused.some((u) => !u.stanza.startsWith('driver ')))
    lines.push(`to run the job without what berth refuses (each left out, with a warning): berth ${command} -unsupported=warn ${file}`);
  return lines;
}
