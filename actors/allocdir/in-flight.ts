/**
 * The bookkeeping of work in or out of an alloc dir (its build, hooks, a local move, a snapshot
 * served): each piece is held in its runner's set until it settles, so a destroy can wait for
 * all of it before removing the dir. One definition, for every effect that copies.
 * @module
 */

/** Work under way on one alloc dir. */
export type InFlight = Set<Promise<unknown>>;

/**
 * Holds `work` in `set` until it settles (either way) and returns it unchanged.
 * @example
 * await trackInFlight(runner.copiesOut, allocDir.build());
 */
export function trackInFlight<T>(set: InFlight | undefined, work: Promise<T>): Promise<T> {
  if (!set) return work;
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  set.add(settled);
  void settled.then(() => set.delete(settled));
  return work;
}
