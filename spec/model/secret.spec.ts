/**
 * `secretMatches`: the token check of the viewer, the snapshot server and (its own copy) the
 * agent. Digests are compared, so any length of guess is answered, never thrown at.
 */
import { expect } from 'chai';
import { secretMatches } from '../../model/secret.ts';

describe('secretMatches (constant-time, length-blind)', () => {
  it('matches only the same secret, whatever the lengths', () => {
    const want = 'f3c9a1d2e4b5';
    expect(secretMatches(want, want)).to.equal(true);
    for (const given of ['', 'f', want.slice(0, -1), want + 'x', want.toUpperCase(), 'x'.repeat(10_000), 'é'.repeat(6)]) {
      expect(secretMatches(given, want), JSON.stringify(given.slice(0, 20))).to.equal(false);
    }
    expect(secretMatches('', '')).to.equal(true);
  });
});
