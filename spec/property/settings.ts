/**
 * Settings of the property specs: seeded and bounded in `npm test`; `BERTH_SOAK=<runs>` (and
 * optionally `BERTH_SEED=<n>`) turns them into a longer soak, e.g.
 * `BERTH_SOAK=2000 npx mocha --no-config -n import=tsx --extension ts spec/property/*.spec.ts`.
 */
export function propertyRuns(quick: number): { seed: number; numRuns: number } {
  const soak = Number(process.env.BERTH_SOAK ?? 0);
  const seed = process.env.BERTH_SEED !== undefined ? Number(process.env.BERTH_SEED) : soak ? Date.now() % 1_000_000 : 20261203;
  return { seed, numRuns: soak > 0 ? soak : quick };
}

/** Mocha timeout for a property spec: bounded normally, none during a soak. */
export function propertyTimeout(ms: number): number {
  return Number(process.env.BERTH_SOAK ?? 0) > 0 ? 0 : ms;
}
