/**
 * Artifact spec helper: a fetch that must be refused with a BerthError and leave the tree under
 * `root` exactly as it was (no file written, moved or changed anywhere in it).
 */
import { expect } from 'chai';
import { fetchArtifact, type FetchArtifactContext } from '../../../actors/artifacts/fetch.ts';
import { BerthError } from '../../../model/errors.ts';
import type { Artifact } from '../../../model/types.ts';
import { fingerprint } from '../allocdir/tree.ts';

/** Fetches `a` with `c`; resolves with the typed error, fails the test if it was accepted or wrote. */
export async function refusedLeavingTree(root: string, a: Artifact, c: FetchArtifactContext): Promise<Error> {
  const before = await fingerprint(root);
  try {
    await fetchArtifact(a, c);
  } catch (e) {
    expect(e, String(e)).to.be.instanceOf(BerthError);
    expect(await fingerprint(root)).to.deep.equal(before);
    return e as Error;
  }
  throw new Error('the artifact was accepted');
}
