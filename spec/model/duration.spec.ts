import { expect } from 'chai';
import { formatGoDuration, InvalidDurationError, parseGoDuration, toMs } from '../../model/index.ts';

describe('Go durations', () => {
  const cases: Array<[string, number]> = [
    ['500ms', 500],
    ['1m30s', 90_000],
    ['2h', 7_200_000],
    ['1.5s', 1500],
    ['', 0],
    ['0', 0],
    ['250us', 0.25],
  ];
  for (const [text, ms] of cases) it(`parses ${JSON.stringify(text)}`, () => expect(parseGoDuration(text)).to.equal(ms));
  it('rejects a bare number and garbage', () => {
    expect(() => parseGoDuration('10')).to.throw(InvalidDurationError, /missing unit/);
    expect(() => parseGoDuration('abc')).to.throw(InvalidDurationError);
  });
  it('accepts ms numbers or strings, nothing else', () => {
    expect(toMs(20)).to.equal(20);
    expect(toMs('20ms')).to.equal(20);
    expect(() => toMs(-1)).to.throw(InvalidDurationError);
    expect(() => toMs({})).to.throw(InvalidDurationError);
  });
  it('formats like Go', () => {
    expect(formatGoDuration(10)).to.equal('10ms');
    expect(formatGoDuration(5000)).to.equal('5s');
    expect(formatGoDuration(90_000)).to.equal('1m30s');
  });
});
