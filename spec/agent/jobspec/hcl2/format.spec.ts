/**
 * `format`, verb by verb as Go's fmt (which cty's format follows) writes them: widths, flags,
 * precision, explicit argument indexes, and each refusal in HashiCorp's words.
 */
import { expect } from 'chai';
import { functionCalls, callFailed } from './function-calls.ts';

const { ev, fails } = functionCalls();
const failed = (why: string) => callFailed('format', why);

describe('hcl2: format', () => {
  const results: Array<[string, string]> = [
    ['${format("%5s|%-5s|%05d|%+d|% d|%x|%X|%o|%b", "a", "b", -42, 5, 5, 255, 255, 8, 5)}', '    a|b    |-0042|+5| 5|ff|FF|10|101'],
    ['${format("%e|%E|%.2f|%f|%.1e|%+e", 1234.5678, 1234.5678, 3.14159, 1, 0.000123, 5)}', '1.234568e+03|1.234568E+03|3.14|1.000000|1.2e-04|+5.000000e+00'],
    ['${format("%t|%q|%v|%#v|%%|%5.2s|%.1s", true, "a\\"b", "x", "x", "abc", "xyz")}', 'true|"a\\"b"|x|"x"|%|   ab|x'],
    ['${format("%v %v %v %v %v %#v", [1, "a"], {k = true}, null, 1.5, false, 2)}', '[1,"a"] {"k":true} null 1.5 false 2'],
    ['${format("%[2]s %[1]s", "a", "b")}', 'b a'],
    ['${format("%[1]s%[1]s", "a")}', 'aa'],
    ['${format("%+x|%x|%+.1f|% .1f|%-4d|%04s|%+05d|%-05d|", 255, -255, 2, 2, 7, "ab", 3, 3)}', '+ff|-ff|+2.0| 2.0|7   |00ab|+0003|3    |'],
    ['${format("%d|%s|%t|%x", "12", 5, "true", 10)}', '12|5|true|a'],
    // %g as Go writes it: %e for exponents below -4 or from the precision on (6 for the shortest form).
    [
      '${format("%g|%g|%g|%g|%g|%g|%g|%g|%g", 1000000, 123456, 1.5, 0.0001, 0.00001, 0, 1e21, -1234567, 100000)}',
      '1e+06|123456|1.5|0.0001|1e-05|0|1e+21|-1.234567e+06|100000',
    ],
    ['${format("%.3g|%.3g|%.2g|%.1g|%.5g|%+g|%8.3g|%.0g", 1234.5678, 100, 0.000123, 0.96, 2.5, 3, 3.14159, 7)}', '1.23e+03|100|0.00012|1|2.5|+3|    3.14|7'],
    ['${format("%g|%g|%g|%.5g|%F|%e", 1.05, 0.5, 1e10, 1000000, 1.5, 1e21)}', '1.05|0.5|1e+10|1e+06|1.500000|1.000000e+21'],
    ['${format("%05s|%+d|% d|%.1048576s", "a-b", 0, 0, "x")}', '00a-b|+0| 0|x'],
    ['${format("%[10]s", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k")}', 'j'],
    ['${format("a%%b")}', 'a%b'],
    ['${format("no verbs")}', 'no verbs'],
    ['${format("%3s|%1s", "abcd", "ab")}', 'abcd|ab'],
  ];
  for (const [text, want] of results)
    it(text, () => {
      expect(ev(text)).to.equal(want);
    });

  it("refusals in HashiCorp's words", () => {
    const cases: Array<[string, string]> = [
      ['${format("%s %s", "a")}', failed('not enough arguments for %s at 3')],
      ['${format("%[3]s", "a", "b")}', failed('not enough arguments for %s at 0')],
      ['${format("%s", "a", "b")}', failed('too many arguments; only 1 used by format string')],
      ['${format("x", 1)}', failed('too many arguments; only 0 used by format string')],
      ['${format("%y", 1)}', failed('unsupported format verb %y')],
      ['${format("%d", 1.5)}', failed('unsupported value for "%d" at 0: an integer is required')],
      ['${format("%s", [1])}', failed('unsupported value for "%s" at 0: string required')],
      ['${format("a%q", [1])}', failed('unsupported value for "%q" at 1: string required')],
      ['${format("%t", "x")}', failed('unsupported value for "%t" at 0: bool required')],
      ['${format("%f", "x")}', failed('unsupported value for "%f" at 0: number required')],
      ['${format("%x", true)}', failed('unsupported value for "%x" at 0: number required')],
      ['${format("%2000000s", "x")}', failed('width or precision over 1048576 at 0')],
      ['${format("%.2000000f", 1)}', failed('width or precision over 1048576 at 0')],
    ];
    expect(cases.map(([text]) => fails(text))).to.deep.equal(cases.map(([, want]) => want));
    // The widest allowed is padded out.
    expect((ev('${format("%1048576s", "x")}') as string).length).to.equal(1048576);
  });
});
