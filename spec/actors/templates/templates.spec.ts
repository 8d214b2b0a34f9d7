/** Focused unit specs of berth's Go template engine: the API, the number model, errors. */
import { expect } from 'chai';
import { GoFloat, render, sprintf, Template, TemplateExecError, TemplateParseError } from '../../../actors/templates/index.ts';

describe('templates: the engine', () => {
  it('renders a pipeline over plain JS data', () => {
    expect(render('{{range $k, $v := .}}{{$k}}={{$v | printf "%q"}} {{end}}', { b: 'x', a: 'y' })).to.equal('a="y" b="x" ');
  });

  it('treats integral numbers as ints and others (and GoFloat) as float64', () => {
    expect(render('{{printf "%d %v %v %d" .i .f .g .g}}', { i: 3, f: 2.5, g: new GoFloat(2) })).to.equal('3 2.5 2 %!d(float64=2)');
  });

  it('throws named errors with Go’s texts', () => {
    expect(() => new Template('t').parse('{{if}}')).to.throw(TemplateParseError, 'template: t:1: missing value for if');
    const t = new Template('t').parse('ok {{index .a 5}}');
    try {
      t.execute({ a: [1] });
      expect.fail('no error');
    } catch (e) {
      expect(e).to.be.instanceOf(TemplateExecError);
      const err = e as TemplateExecError;
      expect(err.message).to.equal('template: t:1:5: executing "t" at <index .a 5>: error calling index: index out of range: 5');
      expect(err.output).to.equal('ok ');
      expect(err.templateName).to.equal('t');
    }
  });

  it('supports missingkey=error and extra functions', () => {
    const t = new Template('t', { missingKey: 'error', funcs: { twice: (s) => `${String(s)}${String(s)}` } }).parse('{{twice .a}}');
    expect(t.execute({ a: 'x' })).to.equal('xx');
    expect(() => t.execute({})).to.throw(TemplateExecError, 'map has no entry for key "a"');
  });

  it('calls functions held in data with call', () => {
    expect(render('{{call .f 2 3}}', { f: (a: unknown, b: unknown) => Number(a) * Number(b) })).to.equal('6');
    expect(() =>
      render('{{call .f}}', {
        f: () => {
          throw new Error('nope');
        },
      }),
    ).to.throw(TemplateExecError, 'error calling call: nope');
  });

  it('associates templates: define, New, executeTemplate', () => {
    const t = new Template('main').parse('{{define "x"}}X{{.}}{{end}}{{template "y" .}}');
    t.new('y').parse('Y{{template "x" .}}');
    expect(t.execute(1)).to.equal('YX1');
    expect(t.executeTemplate('x', 2)).to.equal('X2');
  });

  it('formats like Go’s fmt', () => {
    expect(sprintf('%5.2f|%-4d|%x|%q|%v', [3.14159, 7, 'hi', 'a"b', [1, 'a', null]])).to.equal(' 3.14|7   |6869|"a\\"b"|[1 a <nil>]');
    expect(sprintf('%d %s', [1])).to.equal('1 %!s(MISSING)');
    expect(sprintf('%.2f %.0f', [0.125, 2.5])).to.equal('0.12 2');
  });

  it('strings count UTF-8 bytes: len, index (a uint8, GoByte) and slice', () => {
    expect(render('{{len .s}} {{index .s 1}} {{printf "%T" (index .s 1)}} {{slice .s 1 3}}', { s: 'héllo' })).to.equal('6 195 uint8 é');
  });

  it('known differences from Go: %b on a float is a bad verb, slice past the length fails, "\\xff" is not a byte', () => {
    expect(render('{{printf "%b" 1.5}}', {})).to.equal('%!b(float64=1.5)');
    expect(() => render('{{slice .a 0 4}}', { a: [1, 2, 3] })).to.throw(TemplateExecError, 'error calling slice: index out of range: 4');
    expect(render('{{"\\xff"}}', {})).to.equal('\ufffd');
  });
});
