/**
 * The router's rest-of-path parameter, which the variable routes use (`/v1/var/*path`): it takes
 * one or more segments joined by `/`, an exact route of the same prefix wins over it whatever
 * the order they were added in, and `*` anywhere but last is refused when the route is added.
 */
import { expect } from 'chai';
import { RoutePatternError, Router } from '../../../agent/http/router.ts';

describe('agent router: a rest-of-path parameter', () => {
  const router = () => {
    const r = new Router();
    r.on('GET', '/v1/var/*path', () => undefined);
    r.on('GET', '/v1/vars', () => undefined);
    r.on('GET', '/v1/var/exact/one', () => undefined);
    return r;
  };

  it('takes one or more segments, joined by "/"', () => {
    const r = router();
    expect(r.resolve('GET', ['v1', 'var', 'a'], false).params).to.deep.equal({ path: 'a' });
    expect(r.resolve('GET', ['v1', 'var', 'a', 'b', 'c'], false).params).to.deep.equal({ path: 'a/b/c' });
    // A segment that held an escaped slash joins the same way.
    expect(r.resolve('GET', ['v1', 'var', 'a/b', 'c'], false).params).to.deep.equal({ path: 'a/b/c' });
    expect(() => r.resolve('GET', ['v1', 'var'], false)).to.throw('404 page not found');
  });

  it('lets an exact route of the same prefix win, added before or after it', () => {
    const r = router();
    expect(r.resolve('GET', ['v1', 'var', 'exact', 'one'], false).params).to.deep.equal({});
    expect(r.resolve('GET', ['v1', 'var', 'exact', 'two'], false).params).to.deep.equal({ path: 'exact/two' });
    expect(r.routes().map((x) => x.pattern)).to.have.members(['/v1/var/*path', '/v1/vars', '/v1/var/exact/one']);
  });

  it('refuses "*" anywhere but the last segment', () => {
    expect(() => new Router().on('GET', '/v1/*rest/x', () => undefined)).to.throw(RoutePatternError);
  });
});
