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

  it('parses signs, surrounding space, fractions, every unit and sums of units', () => {
    expect(parseGoDuration('-1.5h')).to.equal(-5_400_000);
    expect(parseGoDuration('+2s')).to.equal(2000);
    expect(parseGoDuration('  3m ')).to.equal(180_000);
    expect(parseGoDuration('1.s')).to.equal(1000);
    expect(parseGoDuration('.5s')).to.equal(500);
    expect(parseGoDuration('1.25s')).to.equal(1250);
    expect(parseGoDuration('1500ns')).to.equal(0.0015);
    expect(parseGoDuration('3µs')).to.equal(0.003);
    expect(parseGoDuration('3μs')).to.equal(0.003);
    expect(parseGoDuration('1h2m3s4ms')).to.equal(3_723_004);
  });

  it('rejects what Go rejects, naming the text', () => {
    expect(() => parseGoDuration('-')).to.throw(InvalidDurationError, 'time: invalid duration "-"');
    expect(() => parseGoDuration('+')).to.throw(InvalidDurationError, 'time: invalid duration "+"');
    expect(() => parseGoDuration('1s5')).to.throw(InvalidDurationError, 'time: missing unit in duration "1s5"');
    expect(() => parseGoDuration('1.5')).to.throw(InvalidDurationError, 'time: missing unit in duration "1.5"');
    expect(() => parseGoDuration('x1s')).to.throw(InvalidDurationError, 'time: invalid duration "x1s"');
    expect(() => parseGoDuration('1s.')).to.throw(InvalidDurationError, 'time: invalid duration "1s."');
    expect(() => parseGoDuration('1.x')).to.throw(InvalidDurationError, 'time: invalid duration "1.x"');
    expect(() => parseGoDuration('.s')).to.throw(InvalidDurationError, 'time: invalid duration ".s"');
    expect(() => parseGoDuration('1d')).to.throw(InvalidDurationError, 'time: invalid duration "1d"');
    expect(() => parseGoDuration('1 s')).to.throw(InvalidDurationError, 'time: invalid duration "1 s"');
    expect(() => parseGoDuration('ab1s')).to.throw(InvalidDurationError, 'time: invalid duration "ab1s"');
    expect(() => parseGoDuration('1sx5')).to.throw(InvalidDurationError, 'time: invalid duration "1sx5"');
    expect(() => parseGoDuration('1.55')).to.throw(InvalidDurationError, 'time: missing unit in duration "1.55"');
    expect(parseGoDuration('.25s')).to.equal(250);
  });

  it('toMs: absent is 0; a negative or non-finite value is refused with the field name', () => {
    expect(toMs(undefined)).to.equal(0);
    expect(toMs(null)).to.equal(0);
    expect(toMs(0)).to.equal(0);
    expect(toMs('0')).to.equal(0);
    expect(() => toMs(-1, 'kill_timeout')).to.throw(InvalidDurationError, 'kill_timeout: must be a non-negative number of ms');
    expect(() => toMs(Infinity, 'x')).to.throw(InvalidDurationError, 'x: must be a non-negative number of ms');
    expect(() => toMs(NaN)).to.throw(InvalidDurationError, 'duration: must be a non-negative number of ms');
    expect(() => toMs('-1s', 'delay')).to.throw(InvalidDurationError, 'delay: must not be negative');
    expect(() => toMs(true, 'delay')).to.throw(InvalidDurationError, 'delay: must be a number of ms or a duration string like "500ms"');
    expect(() => toMs({})).to.throw(InvalidDurationError, 'duration: must be a number of ms or a duration string like "500ms"');
  });

  it('formats nanoseconds, fractions of ms, hours and exact boundaries like Go', () => {
    expect(formatGoDuration(0)).to.equal('0s');
    expect(formatGoDuration(0.0015)).to.equal('1.5µs');
    expect(formatGoDuration(0.25)).to.equal('250µs');
    expect(formatGoDuration(1)).to.equal('1ms');
    expect(formatGoDuration(1.5)).to.equal('1.5ms');
    expect(formatGoDuration(999)).to.equal('999ms');
    // Each as Go 1.19's time.Duration.String prints it.
    for (const [ns, go] of [
      [1, '1ns'],
      [999, '999ns'],
      [52437, '52.437µs'],
      [1234567, '1.234567ms'],
      [1234567891, '1.234567891s'],
      [3723000000000, '1h2m3s'],
    ] as const)
      expect(formatGoDuration(ns / 1e6), String(ns)).to.equal(go);
    expect(formatGoDuration(-1500)).to.equal('-1.5s');
    expect(formatGoDuration(1000)).to.equal('1s');
    expect(formatGoDuration(1500)).to.equal('1.5s');
    expect(formatGoDuration(60_000)).to.equal('1m0s');
    expect(formatGoDuration(3_600_000)).to.equal('1h0m0s');
    expect(formatGoDuration(3_723_004)).to.equal('1h2m3.004s');
    expect(formatGoDuration(7_200_000 + 90_000)).to.equal('2h1m30s');
  });
});
