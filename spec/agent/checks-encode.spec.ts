import { expect } from 'chai';
import { ServiceCatalog } from '../../actors/services/catalog.ts';
import { apiChecks, checkId } from '../../agent/http/checks.ts';

describe("agent: check results in Nomad's CheckQueryResult shape", () => {
  const reg = {
    id: 'r1',
    serviceName: 'web',
    namespace: 'default',
    nodeId: 'n',
    datacenter: 'dc1',
    jobId: 'j',
    allocId: 'a1',
    tags: [],
    address: '127.0.0.1',
    port: 1,
  };

  it('a check not run yet is pending; passing is success, warning and critical are failure; task and status code only when known', () => {
    const c = new ServiceCatalog();
    c.register(reg);
    c.register({ ...reg, id: 'r2', serviceName: 'api' }, 'srv');
    c.setCheck('r1', { name: 'first', status: 'critical', output: '', timestamp: 5_000, pending: true });
    c.setCheck('r1', { name: 'warn', status: 'warning', output: 'slow', timestamp: 6_500, statusCode: 429 });
    c.setCheck('r2', { name: 'ok', status: 'passing', output: 'fine', timestamp: 7_999, statusCode: 200 });
    const results = c.checksOf('a1', 'g');
    expect(results.map((r) => `${r.service}/${r.check}`)).to.deep.equal(['api/ok', 'web/first', 'web/warn']);
    const body = Object.values(apiChecks(results));
    expect(body).to.deep.equal([
      {
        ID: checkId(results[0]!),
        Mode: 'healthiness',
        Status: 'success',
        StatusCode: 200,
        Output: 'fine',
        Timestamp: 7,
        Group: 'g',
        Task: 'srv',
        Service: 'api',
        Check: 'ok',
      },
      { ID: checkId(results[1]!), Mode: 'healthiness', Status: 'pending', Output: '', Timestamp: 5, Group: 'g', Service: 'web', Check: 'first' },
      {
        ID: checkId(results[2]!),
        Mode: 'healthiness',
        Status: 'failure',
        StatusCode: 429,
        Output: 'slow',
        Timestamp: 6,
        Group: 'g',
        Service: 'web',
        Check: 'warn',
      },
    ]);
    expect(new Set(body.map((b) => b.ID)).size).to.equal(3);
    expect(c.checksOf('other', 'g')).to.deep.equal([]);
  });
});
