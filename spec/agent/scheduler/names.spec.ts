// Nomad's alloc names and name index (`allocNameIndex`): new allocs take the free indexes below
// the count, lowest first, then overlap from 0; a count down releases the highest indexes; an
// index held twice (a replacement beside the alloc it replaces) is free once both let it go.
import { expect } from 'chai';
import { allocIndexOf, allocName, NameIndex } from '../../../agent/scheduler/names.ts';

const names = (...i: number[]) => i.map((n) => allocName('web', 'g', n));

describe('scheduler: alloc names and the name index', () => {
  it('names are <job>.<group>[<index>]', () => expect(allocName('web', 'cache', 12)).to.equal('web.cache[12]'));

  describe('the index in a name (NOMAD_ALLOC_INDEX)', () => {
    const cases: Array<[string | undefined, number | undefined]> = [
      ['web.g[3]', 3],
      ['web.g[12]', 12],
      ['job[7].g[2]', 2], // the last bracket is the index
      ['web.g[3]x', undefined],
      ['web.g[x]', undefined],
      ['web.g', undefined],
      ['', undefined],
      [undefined, undefined],
    ];
    for (const [name, index] of cases) it(`${JSON.stringify(name)} → ${index}`, () => expect(allocIndexOf(name)).to.equal(index));
  });

  describe('next: free indexes below the count first, lowest first, then from 0 again', () => {
    // [count, names held, n asked, names given]
    const cases: Array<[string, number, number[], number, string[]]> = [
      ['a new group takes 0..n-1', 3, [], 3, names(0, 1, 2)],
      ['the gaps, lowest first', 4, [0, 2], 2, names(1, 3)],
      ['past the count: overlap from 0', 2, [0], 3, names(1, 0, 1)],
      ['every index held: overlap from 0', 2, [0, 1], 2, names(0, 1)],
      ['an index held above the count is no gap below it', 2, [5], 2, names(0, 1)],
      ['none asked, none given', 2, [], 0, []],
    ];
    for (const [name, count, held, n, given] of cases) it(name, () => expect(new NameIndex('web', 'g', count, names(...held)).next(n)).to.deep.equal(given));

    it('names taken one call after another do not repeat', () => {
      const idx = new NameIndex('web', 'g', 3, names(1));
      expect([...idx.next(1), ...idx.next(1), ...idx.next(1)]).to.deep.equal(names(0, 2, 0));
    });
  });

  describe('highest: a count down stops the highest indexes first', () => {
    const cases: Array<[string, number, number[], number, string[]]> = [
      ['the highest two', 3, [0, 1, 2], 2, names(2, 1)],
      ['an index above the count is the highest', 3, [0, 1, 2, 5], 2, names(5, 2)],
      ['gaps are skipped', 3, [0, 2], 2, names(2, 0)],
      ['index 0 goes too when asked for all', 2, [0, 1], 2, names(1, 0)],
      ['fewer held than asked: all there are', 4, [1], 3, names(1)],
    ];
    for (const [name, count, held, n, released] of cases)
      it(name, () => expect([...new NameIndex('web', 'g', count, names(...held)).highest(n)]).to.deep.equal(released));

    it('a released index is free again for next', () => {
      const idx = new NameIndex('web', 'g', 3, names(0, 1, 2));
      expect(idx.next(1)).to.deep.equal(names(0)); // overlap: every index is held
      idx.highest(1);
      expect(idx.next(1)).to.deep.equal(names(2));
    });
  });

  describe('unset: one holder gives its index back', () => {
    it('an index held once is free at once', () => {
      const idx = new NameIndex('web', 'g', 3, names(0, 1, 2));
      idx.unset(1);
      expect(idx.next(1)).to.deep.equal(names(1));
    });

    it('an index held three times is free after the third unset', () => {
      const idx = new NameIndex('web', 'g', 2, names(1, 1, 1, 0));
      idx.unset(1);
      idx.unset(1);
      const twice = idx.next(1); // 1 still held: every index is, so overlap from 0
      idx.unset(1);
      expect([twice, idx.next(1)]).to.deep.equal([names(0), names(1)]);
    });
  });
});
