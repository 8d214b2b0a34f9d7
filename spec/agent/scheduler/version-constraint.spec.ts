// Nomad's `version` (go-version: lenient versions, `~>`, pre-releases matched only by a
// constraint with a pre-release on the same segments) and `semver` (strict SemVer 2.0
// constraints: no `~>`, at most three segments, pre-releases ordered, never special-cased).
import { expect } from 'chai';
import { compareVersions, parseVersion, parseVersionConstraint, versionMatches } from '../../../agent/scheduler/version-constraint.ts';

describe('scheduler: version and semver constraints', () => {
  describe('version (go-version)', () => {
    // [version, constraint, holds]
    const cases: Array<[string, string, boolean]> = [
      ['1.2.3', '= 1.2.3', true],
      ['1.2.3', '1.2.3', true], // no operator is `=`
      ['1.2.4', '1.2.3', false], // (not `~>`)
      ['1.2.3', '>= 1.0 junk', false],
      ['1.5', '>= 1.0 , < 2.0 ', true], // spaces around each part
      ['1.2.4', '= 1.2.3', false],
      ['1.2', '= 1.2.0', true], // missing segments are 0
      ['1.2.3.0', '= 1.2.3', true],
      ['1.2.3.1', '= 1.2.3', false],
      ['v1.2.3', '= 1.2.3', true],
      ['1.2.3+build.5', '= 1.2.3', true], // metadata does not count
      ['  1.2.3 ', '=1.2.3', true],
      ['1.2.3', '!= 1.2.3', false],
      ['1.2.4', '!= 1.2.3', true],
      ['1.2.3-beta', '!= 1.2.3', true], // != does not apply the pre-release rule
      ['1.2.4', '> 1.2.3', true],
      ['1.2.3', '> 1.2.3', false],
      ['1.10.0', '> 1.9.0', true], // segments are numbers, not text
      ['2.0.0', '> 1.9.9', true],
      ['1.2.3', '>= 1.2.3', true],
      ['1.2.2', '>= 1.2.3', false],
      ['1.2.2', '< 1.2.3', true],
      ['1.2.3', '< 1.2.3', false],
      ['1.2.3', '<= 1.2.3', true],
      ['1.2.4', '<= 1.2.3', false],
      ['1.5', '>= 1.0, < 2.0', true], // a comma list: every part holds
      ['2.0.0', '>= 1.0, < 2.0', false],
      ['0.9', '>= 1.0, < 2.0', false],
      // A pre-release version matches only a constraint with a pre-release on the same segments.
      ['1.2.3-beta', '>= 1.0', false],
      ['1.2.3-beta', '> 1.0', false],
      ['1.2.3-beta', '< 2.0', false],
      ['1.2.3-beta', '<= 2.0', false],
      ['1.2.3-beta', '>= 1.2.3-alpha', true],
      ['1.2.3-alpha', '>= 1.2.3-beta', false],
      ['1.2.3-beta', '> 1.2.3-alpha', true],
      ['1.2.3-alpha', '< 1.2.3-beta', true],
      ['1.2.3-alpha', '<= 1.2.3-alpha', true],
      ['1.2.4-beta', '>= 1.2.3-alpha', false],
      ['1.2.2-beta', '< 1.2.3-alpha', false],
      ['1.2.3-beta', '= 1.2.3-beta', true],
      ['1.2.3', '= 1.2.3-beta', false],
      ['1.2.3', '> 1.2.3-beta', true], // a release is above its pre-releases
      ['1.2.3', '>= 1.2.3-beta', true],
      ['1.2.3', '< 1.2.3-beta', false],
      ['1.2.4', '> 1.2.3-beta', true], // a release version is not held to the constraint's segments
      ['1.2.3-beta', '<= 1.2.3', false], // a constraint without a pre-release never matches one
      ['6.8.0-45-generic', '>= 6.0', false],
      ['6.8.0-45-generic', '>= 6.8.0-1', true], // numeric pre-release parts as numbers: 45 > 1
      ['6.8.0-45-generic', '<= 6.8.0-9', false],
      ['1.2.3beta', '>= 1.2.3-alpha', true], // a pre-release may be written without its dash
      // ~>: at least this, the same leading segments up to the last one written.
      ['1.2.3', '~> 1.2.3', true],
      ['1.2.9', '~> 1.2.3', true],
      ['1.2.2', '~> 1.2.3', false],
      ['1.3.0', '~> 1.2.3', false],
      ['2.2.5', '~> 1.2.3', false],
      ['1.2', '~> 1.2', true],
      ['1.9.7', '~> 1.2', true],
      ['2.0', '~> 1.2', false],
      ['0.9', '~> 1.2', false],
      ['7.1', '~> 1', true],
      ['1.2.3-beta', '~> 1.2.3', false],
      ['1.2.3', '~> 1.2.3-beta', false], // a pre-release constraint takes pre-releases only
      ['1.2.3-rc1', '~> 1.2.3-beta', true],
      ['1.2.3-alpha', '~> 1.2.3-beta', false],
      ['1.2.4-rc1', '~> 1.2.3-beta', false],
      // Anything that does not parse fails.
      ['banana', '>= 1.0', false],
      ['', '>= 1.0', false],
      ['1.2.3', '>= banana', false],
      ['1.2.3', '>= 1.0, oops', false],
      ['1.2.3', '=> 1.0', false],
      ['1.2.3', '', false],
      ['1.2.3', '>= 1.0,', false],
      ['99999999999999999999.0', '>= 1.0', false], // a segment past 2^53 is no number
      ['1.99999999999999999999', '>= 1.0', false],
      ['1.2.3', '>= 99999999999999999999', false],
    ];
    for (const [v, c, holds] of cases) it(`${JSON.stringify(v)} ${c} → ${holds}`, () => expect(versionMatches(v, c)).to.equal(holds));
  });

  describe('semver (strict SemVer constraints)', () => {
    const cases: Array<[string, string, boolean]> = [
      ['1.2.3', '>= 1.2.0', true],
      ['1.2.3', '> 1.2.3', false],
      ['1.2.3', '= v1.2.3', true],
      ['1.2.3', '~> 1.2', false], // no ~> in semver
      ['1.2.3', '>= 1.2, ~> 1.2', false],
      ['6.8.0-45-generic', '>= 6.0.0', true], // pre-releases are ordered, not special-cased
      ['1.2.3-beta', '< 1.2.3', true],
      ['1.2.3-beta', '>= 1.0.0', true],
      ['1.2.3-beta', '<= 1.2.3-beta', true],
      ['1.2.3-beta', '> 1.2.3-beta', false],
      ['1.2.3-beta.2', '< 1.2.3-beta.11', true],
      ['1.2.3-beta', '>= 1.2.3-alpha', true],
      ['1.2.3-alpha', '>= 1.2.3-beta', false],
      ['1.2.3', '= 1.2.3+build', true], // metadata is no pre-release
      ['1.2.3.5', '>= 1.2.3.4', false], // four segments are no semver constraint…
      ['1.2.3.4', '>= 1.0.0', true], // …but the version is read leniently
      ['1.2.3', '>= 1.2.3beta', false], // a pre-release needs its dash
      ['1.2.3', '!= 1.2.4', true],
      ['1.2.3', '!= 1.2.3', false],
    ];
    for (const [v, c, holds] of cases) it(`${JSON.stringify(v)} ${c} → ${holds}`, () => expect(versionMatches(v, c, true)).to.equal(holds));
    it('the same four-segment constraint holds as a version constraint', () => expect(versionMatches('1.2.3.5', '>= 1.2.3.4')).to.equal(true));
  });

  it('a constraint list parses leniently by default (~> allowed)', () => {
    const check = parseVersionConstraint('~> 1.2');
    expect(check && [check(parseVersion('1.9')!), check(parseVersion('2.0')!)]).to.deep.equal([true, false]);
  });

  describe('parsing', () => {
    const cases: Array<[string, boolean, ReturnType<typeof parseVersion>]> = [
      ['1.2', false, { segments: [1, 2, 0], written: 2, pre: '' }],
      ['1', false, { segments: [1, 0, 0], written: 1, pre: '' }],
      ['1.2.3.4', false, { segments: [1, 2, 3, 4], written: 4, pre: '' }],
      ['v1.2.3-beta.1+meta', false, { segments: [1, 2, 3], written: 3, pre: 'beta.1' }],
      ['1.2.3beta', false, { segments: [1, 2, 3], written: 3, pre: 'beta' }],
      ['6.8.0-45-generic', false, { segments: [6, 8, 0], written: 3, pre: '45-generic' }],
      ['1.2.3-rc.1+build', true, { segments: [1, 2, 3], written: 3, pre: 'rc.1' }],
      ['1.2.3+build', true, { segments: [1, 2, 3], written: 3, pre: '' }],
      ['1.2.3+build', false, { segments: [1, 2, 3], written: 3, pre: '' }],
      ['1.2.3.4', true, undefined],
      ['1.2.3beta', true, undefined],
      ['x1.2', false, undefined],
    ];
    for (const [text, strict, parsed] of cases)
      it(`${JSON.stringify(text)}${strict ? ' (strict)' : ''}`, () => expect(parseVersion(text, strict)).to.deep.equal(parsed));
  });

  describe('order (SemVer 2.0 precedence, §11)', () => {
    // Each is below the next.
    const order = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.1.0',
      '2.0.0',
    ];
    for (let i = 0; i + 1 < order.length; i++)
      it(`${order[i]} < ${order[i + 1]}`, () => {
        const a = parseVersion(order[i]!)!;
        const b = parseVersion(order[i + 1]!)!;
        expect([compareVersions(a, b), compareVersions(b, a), compareVersions(a, a)]).to.deep.equal([-1, 1, 0]);
      });
    it('segments past the third count, missing ones are 0', () => {
      const v = (t: string) => parseVersion(t)!;
      expect([compareVersions(v('1.2.3.4'), v('1.2.3')), compareVersions(v('1.2.3'), v('1.2.3.4')), compareVersions(v('1.2.3.0'), v('1.2.3'))]).to.deep.equal([
        1, -1, 0,
      ]);
    });
    // [a, b, a against b], strict SemVer parsing.
    const parts: Array<[string, string, number]> = [
      ['1.0.0-1', '1.0.0-a', -1], // a numeric identifier is below an alphanumeric one…
      ['1.0.0-a', '1.0.0-1', 1],
      ['1.0.0-rc.1', '1.0.0-rc.-x', -1], // …even one that sorts below digits as text
      ['1.0.0-rc.-x', '1.0.0-rc.1', 1],
      ['1.0.0-rc.10', '1.0.0-rc.-x', -1],
      ['1.0.0-rc.-x', '1.0.0-rc.10', 1],
      ['1.0.0-alpha.01', '1.0.0-alpha.1', 0], // numeric identifiers compare as numbers
      ['1.0.0-alpha.1', '1.0.0-alpha.01', 0],
      ['1.0.0-a0', '1.0.0-a1', -1], // alphanumeric ones as text
      ['1.0.0-0b', '1.0.0-1a', -1],
      ['1.0.0-a.b', '1.0.0-a.b', 0],
    ];
    for (const [a, b, order] of parts)
      it(`${a} against ${b}: ${order}`, () => expect(compareVersions(parseVersion(a, true)!, parseVersion(b, true)!)).to.equal(order));
  });
});
