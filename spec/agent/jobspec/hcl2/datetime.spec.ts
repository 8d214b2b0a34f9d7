/**
 * timeadd and formatdate, as cty's: RFC 3339 in (its fraction and offset kept), every formatdate
 * verb, quoted literals, years before 100 (Go's zero time is year 1), and each refusal.
 */
import { expect } from 'chai';
import { functionCalls } from './function-calls.ts';

const { ev, fails } = functionCalls();

describe('hcl2: date and time functions', () => {
  const results: Array<[string, string]> = [
    ['${timeadd("2017-11-22T00:00:00Z", "10m")}', '2017-11-22T00:10:00Z'],
    ['${timeadd("2017-11-22T00:00:00.5z", "1s")}', '2017-11-22T00:00:01.5Z'],
    ['${timeadd("2017-11-22T00:30:00-05:30", "-1h")}', '2017-11-21T23:30:00-05:30'],
    ['${timeadd("2020-02-28t23:00:00+01:00", "1h30m")}', '2020-02-29T00:30:00+01:00'],
    ['${timeadd("0001-01-01T00:00:00Z", "1h")}', '0001-01-01T01:00:00Z'],
    ['${timeadd("2017-11-22T00:00:00.25Z", "1s")}', '2017-11-22T00:00:01.25Z'],
    ['${formatdate("H HH h AA aa", "2018-12-30T12:05:00Z")}', '12 12 12 PM pm'],
    ['${timeadd("0000-02-28T23:00:00Z", "1h")}', '0000-02-29T00:00:00Z'],
    [
      '${formatdate("YYYY YY MMMM MMM MM M DD D EEEE EEE hh h HH H AA aa mm m ss s ZZZZZ ZZZZ ZZZ Z", "2018-01-02T03:04:05+05:30")}',
      '2018 18 January Jan 01 1 02 2 Tuesday Tue 03 3 03 3 AM am 04 4 05 5 +05:30 +0530 +0530 +05:30',
    ],
    ['${formatdate("HH H AA aa hh ZZZ Z ZZZZZ ZZZZ", "2018-12-30T00:00:00Z")}', '12 12 AM am 00 UTC Z +00:00 +0000'],
    ['${formatdate("HH:mm AA aa, ZZZ", "2018-12-30T13:07:00-08:00")}', '01:07 PM pm, -0800'],
    ["${formatdate(\"h 'o''clock''' ''\", \"2018-12-30T09:00:00Z\")}", "9 o'clock' '"],
    ['${formatdate("DD.MM.YYYY, EEEE", "0099-03-01T00:00:00Z")}', '01.03.0099, Sunday'],
    ['${formatdate("MMMM D, YYYY", "2024-12-31T23:59:59+14:00")}', 'December 31, 2024'],
  ];
  for (const [text, want] of results)
    it(text, () => {
      expect(ev(text)).to.equal(want);
    });

  it("refusals in HashiCorp's words", () => {
    const cases: Array<[string, string]> = [
      ['${timeadd("x", "1s")}', 'Invalid function argument; Invalid value for "timestamp" parameter: not a valid RFC3339 timestamp: cannot use "x" as year.'],
      ['${timeadd("2017-11-22T00:00:00Z", "1x")}', 'Error in function call; Call to function "timeadd" failed: time: invalid duration "1x".'],
      [
        '${formatdate("YYYY", "2017-11-22 00:00:00Z")}',
        'Invalid function argument; Invalid value for "time" parameter: not a valid RFC3339 timestamp: cannot use "2017-11-22 00:00:00Z" as year.',
      ],
      [
        '${timeadd("2017-11-22T00:00:00Zx", "1s")}',
        'Invalid function argument; Invalid value for "timestamp" parameter: not a valid RFC3339 timestamp: cannot use "2017-11-22T00:00:00Zx" as year.',
      ],
      [
        '${timeadd("x2017-11-22T00:00:00Z", "1s")}',
        'Invalid function argument; Invalid value for "timestamp" parameter: not a valid RFC3339 timestamp: cannot use "x2017-11-22T00:00:00Z" as year.',
      ],
      [
        '${formatdate("Q", "2018-12-30T09:00:00Z")}',
        'Invalid function argument; Invalid value for "format" parameter: invalid date format verb "Q": unsupported format.',
      ],
      [
        '${formatdate("YYY", "2018-12-30T09:00:00Z")}',
        'Invalid function argument; Invalid value for "format" parameter: invalid date format verb "YYY": unsupported format.',
      ],
    ];
    expect(cases.map(([text]) => fails(text))).to.deep.equal(cases.map(([, want]) => want));
  });
});
