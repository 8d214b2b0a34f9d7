/**
 * The HCL2 expression lexer, token by token: identifiers (letters, digits, `_` and `-`), numbers
 * (fraction and exponent), the longest punctuation first, the opening quote of a template,
 * whitespace and HCL's three comment forms skipped, and HCL's "Invalid character" error.
 */
import { expect } from 'chai';
import { HclDiagnostic } from '../../../../agent/jobspec/hcl2/errors.ts';
import { nextToken, skipSpace, type Token } from '../../../../agent/jobspec/hcl2/lexer.ts';

/** Every token of `src` up to and including eof. */
function tokens(src: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; ;) {
    const t = nextToken(src, i);
    out.push(t);
    if (t.type === 'eof') return out;
    i = t.end;
  }
}

const brief = (src: string) => tokens(src).map((t) => `${t.type}:${t.text}@${t.start}-${t.end}`);

describe('hcl2: lexer', () => {
  it('identifiers hold letters, digits, _ and -, and start with a letter or _', () => {
    expect(tokens('a_b-c9 _x Z')).to.deep.equal([
      { type: 'ident', text: 'a_b-c9', start: 0, end: 6 },
      { type: 'ident', text: '_x', start: 7, end: 9 },
      { type: 'ident', text: 'Z', start: 10, end: 11 },
      { type: 'eof', text: '', start: 11, end: 11 },
    ]);
  });

  it('a name or number of any length is one token', () => {
    const name = `n${'a'.repeat(299)}`;
    const digits = '7'.repeat(300);
    expect(brief(`${name} ${digits}.5`)).to.deep.equal([`ident:${name}@0-300`, `number:${digits}.5@301-603`, 'eof:@603-603']);
  });

  it('numbers: integers, fractions and exponents; a trailing dot or a bare exponent is not part of one', () => {
    expect(brief('0 12 1.5 2e10 3E+2 4e-1 5.25e3')).to.deep.equal([
      'number:0@0-1',
      'number:12@2-4',
      'number:1.5@5-8',
      'number:2e10@9-13',
      'number:3E+2@14-18',
      'number:4e-1@19-23',
      'number:5.25e3@24-30',
      'eof:@30-30',
    ]);
    expect(brief('1.x')).to.deep.equal(['number:1@0-1', 'punct:.@1-2', 'ident:x@2-3', 'eof:@3-3']);
    expect(brief('7e')).to.deep.equal(['number:7@0-1', 'ident:e@1-2', 'eof:@2-2']);
    // A number then a name: digits never start an identifier.
    expect(brief('9a')).to.deep.equal(['number:9@0-1', 'ident:a@1-2', 'eof:@2-2']);
  });

  it('punctuation: the longest operator first', () => {
    expect(brief('... == != <= >= && || => ~ [ ] ( ) { } , . ? : = ! < > + - * / %').map((t) => t.split('@')[0])).to.deep.equal([
      'punct:...',
      'punct:==',
      'punct:!=',
      'punct:<=',
      'punct:>=',
      'punct:&&',
      'punct:||',
      'punct:=>',
      'punct:~',
      'punct:[',
      'punct:]',
      'punct:(',
      'punct:)',
      'punct:{',
      'punct:}',
      'punct:,',
      'punct:.',
      'punct:?',
      'punct::',
      'punct:=',
      'punct:!',
      'punct:<',
      'punct:>',
      'punct:+',
      'punct:-',
      'punct:*',
      'punct:/',
      'punct:%',
      'eof:',
    ]);
    expect(brief('a==b')).to.deep.equal(['ident:a@0-1', 'punct:==@1-3', 'ident:b@3-4', 'eof:@4-4']);
    expect(brief('x...]')).to.deep.equal(['ident:x@0-1', 'punct:...@1-4', 'punct:]@4-5', 'eof:@5-5']);
    expect(brief('..')).to.deep.equal(['punct:.@0-1', 'punct:.@1-2', 'eof:@2-2']);
  });

  it('a double quote opens a template: one quote token, the rest is for the parser', () => {
    expect(nextToken('  "a"', 0)).to.deep.equal({ type: 'quote', text: '"', start: 2, end: 3 });
  });

  it('skips spaces, tabs, newlines and #, // and /* */ comments, before and between tokens', () => {
    const src = ' \t\n# one\n// two\n/* three\n */ a /**/b// end';
    expect(brief(src)).to.deep.equal(['ident:a@29-30', 'ident:b@35-36', 'eof:@42-42']);
    expect(skipSpace(src, 0)).to.equal(29);
    expect(skipSpace('a', 0)).to.equal(0);
    expect(skipSpace('  ', 0)).to.equal(2);
    expect(skipSpace('x  # c\ny', 1)).to.equal(7);
    // A comment to the end of the text, and an unclosed block comment, end the text.
    expect(skipSpace('# no newline', 0)).to.equal(12);
    expect(skipSpace('// no newline', 0)).to.equal(13);
    expect(skipSpace('/* open', 0)).to.equal(7);
    expect(skipSpace('/*/ a', 0)).to.equal(5);
    expect(skipSpace('/**/', 0)).to.equal(4);
    expect(skipSpace('/ a', 0)).to.equal(0);
    expect(nextToken('', 0)).to.deep.equal({ type: 'eof', text: '', start: 0, end: 0 });
    expect(nextToken('ab', 5)).to.deep.equal({ type: 'eof', text: '', start: 5, end: 5 });
  });

  it('a character HCL does not use is "Invalid character" at its offset', () => {
    const failure = (src: string, at: number) => {
      try {
        nextToken(src, at);
      } catch (e) {
        expect(e).to.be.instanceOf(HclDiagnostic);
        const d = e as HclDiagnostic;
        return { message: d.message, at: d.at };
      }
      throw new Error(`${src} lexed`);
    };
    expect(failure('a @', 1)).to.deep.equal({ message: 'Invalid character; This character is not used within the language: "@".', at: 2 });
    expect(failure(';', 0)).to.deep.equal({ message: 'Invalid character; This character is not used within the language: ";".', at: 0 });
    expect(failure('&', 0)).to.deep.equal({ message: 'Invalid character; This character is not used within the language: "&".', at: 0 });
  });
});
