/**
 * Skips that say why, and that CI does not accept: CI (CI=true) runs as root on a machine with a
 * writable cgroup hierarchy, so a missing prerequisite there is a failure, not a quiet skip. What
 * may still skip in CI is listed, with the reason, in spec/support/allowed-skips.mjs.
 */
import { detectCgroups } from '../../actors/cgroups/detect.ts';

/** Whether this is a CI run (.ci/run is started with CI=true). */
export const inCi = (): boolean => process.env.CI === 'true';

/** Skips the current test (or a hook's tests) saying why; in CI fails instead. */
export function skipOrFailInCi(ctx: Mocha.Context, reason: string): never {
  if (inCi()) throw new Error(`CI must be able to run this (CI=true): ${reason}`);
  skipSaying(ctx, reason);
}

/**
 * Skips the current test (or a hook's tests) saying why, in CI too: for what a checkout may lack
 * by design (the shared corpus outside the repository), each listed in allowed-skips.mjs.
 */
export function skipSaying(ctx: Mocha.Context, reason: string): never {
  console.log(`      (skipped: ${reason})`);
  ctx.skip();
  throw new Error('unreachable: ctx.skip() throws');
}

/**
 * For a spec of one cgroup version: skips when the machine has the other version writable (a
 * machine has one or the other); skips or, in CI, fails when it has no writable hierarchy at all.
 */
export function cgroupVersionOrSkip(ctx: Mocha.Context, mode: 'v1' | 'v2'): void {
  if (process.geteuid?.() !== 0) skipOrFailInCi(ctx, 'cgroups need root');
  let reason: string;
  try {
    const d = detectCgroups({ mode });
    if (d.ok) return;
    reason = d.reason;
  } catch (e) {
    reason = (e as Error).message;
  }
  let other = false;
  try {
    other = detectCgroups().ok;
  } catch {
    // neither version: fall through
  }
  if (other) {
    console.log(`      (skipped: this machine has the other cgroup version: ${reason})`);
    ctx.skip();
  }
  skipOrFailInCi(ctx, `no writable cgroup hierarchy: ${reason}`);
}

/**
 * For a root-only test: skips it, saying why in its title, when the euid is not 0. CI runs as
 * root, and scripts/check-skips.mjs fails it on such a skip. (`euid` is this process's; a spec passes another.)
 */
export function rootOnly(ctx: Mocha.Context, why: string, euid = process.geteuid?.()): void {
  if (euid === 0) return;
  const t = ctx.currentTest ?? ctx.test!;
  t.title += ` (skipped: needs root ${why})`;
  ctx.skip();
}
