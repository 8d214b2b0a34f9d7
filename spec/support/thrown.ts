/** What a call throws, for specs that assert on the error itself. */

/** Throws what `fn` throws, or fails when it returns. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}
