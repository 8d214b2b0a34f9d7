/**
 * The agent's one parse of a request target, alone: what each refusal says (a 400 naming why),
 * the root and a trailing `/`, the query kept apart from the path, and an absolute-form target
 * taken only for the request's own Host (compared without case), never read out of a query.
 */
import { expect } from 'chai';
import { ApiError } from '../../../agent/http/errors.ts';
import { parseTarget } from '../../../agent/http/target.ts';

const HOST = 'localhost:4646';

/** The ApiError `parseTarget(raw, host)` throws, as [status, message] (`null`: no Host header). */
function refusal(raw: string, host: string | null = HOST): [number, string] {
  try {
    parseTarget(raw, host ?? undefined);
  } catch (e) {
    expect(e, raw).to.be.instanceOf(ApiError);
    return [(e as ApiError).status, (e as ApiError).message];
  }
  throw new Error(`${raw} was taken`);
}

describe('agent: the request-target parse', () => {
  it('says why it refuses each unclean target, with a 400', () => {
    expect(refusal('/v1/jobs#x')).to.deep.equal([400, 'invalid request target: a fragment is not sent to a server']);
    expect(refusal('/v1\\jobs')).to.deep.equal([400, 'invalid request target: "\\" is not a path separator']);
    expect(refusal('v1/jobs')).to.deep.equal([400, 'invalid request target: the path must start with "/"']);
    expect(refusal('/v1//jobs')).to.deep.equal([400, 'invalid request target: empty path segment ("//")']);
    expect(refusal('/v1/%2E/jobs')).to.deep.equal([400, 'invalid request target: dot segments ("." and "..") are not resolved']);
    expect(refusal('/v1/job/%zz')).to.deep.equal([400, 'invalid request target: malformed percent-escape in path segment "%zz"']);
  });

  it('the root has no segments; one trailing "/" is dropped', () => {
    expect(parseTarget('/', HOST).segments).to.deep.equal([]);
    expect(parseTarget('/?x=1', HOST).segments).to.deep.equal([]);
    expect(parseTarget('/v1/jobs/', HOST).segments).to.deep.equal(['v1', 'jobs']);
  });

  it('keeps the query apart from the path; a target with none has an empty query', () => {
    const t = parseTarget('/v1/jobs?prefix=a%2Fb&x', HOST);
    expect([t.path, t.segments, [...t.query]]).to.deep.equal([
      '/v1/jobs',
      ['v1', 'jobs'],
      [
        ['prefix', 'a/b'],
        ['x', ''],
      ],
    ]);
    const none = parseTarget('/v1/jobs', HOST);
    expect([none.path, [...none.query]]).to.deep.equal(['/v1/jobs', []]);
  });

  it('takes an absolute-form target for its own Host only, whatever the case, and a bare one as the root', () => {
    expect(parseTarget('http://LocalHost:4646/v1/jobs', HOST).segments).to.deep.equal(['v1', 'jobs']);
    expect(parseTarget('https://localhost:4646/v1/jobs', 'LOCALHOST:4646').segments).to.deep.equal(['v1', 'jobs']);
    expect(parseTarget('http://localhost:4646', HOST).segments).to.deep.equal([]);
    expect(refusal('http://evil.example/v1/jobs')).to.deep.equal([400, 'invalid request target: absolute-form target for another host']);
    // without a Host header there is nothing an absolute-form target could be checked against
    expect(refusal('http://localhost:4646/v1/jobs', null)).to.deep.equal([400, 'invalid request target: absolute-form target for another host']);
    // a URL in the query is not an absolute-form target
    const t = parseTarget('/v1/jobs?next=http://evil.example/', HOST);
    expect([t.segments, t.query.get('next')]).to.deep.equal([['v1', 'jobs'], 'http://evil.example/']);
  });
});
