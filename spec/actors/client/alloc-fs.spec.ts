import { expect } from 'chai';
import { SecretFileReadError } from '../../../actors/allocfs/index.ts';
import { makeAlloc, mockTask } from '../../support/fixtures.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

describe('client: runner.fs', () => {
  const newClient = useTempClients();

  it("reads the running alloc's dir: a task log, the layout, never its secrets", async () => {
    const client = newClient();
    const r = client.addAlloc(makeAlloc([mockTask('web', { run_for: '10s', stdout_string: 'hello from web\n' })]));
    await viewWhere(client, r, (a) => a.taskStates!.web!.state === 'running');
    expect((await r.fs.list('/')).map((e) => e.name)).to.deep.equal(['alloc', 'web']);
    const ctl = new AbortController();
    let text = '';
    for await (const chunk of r.fs.stream('alloc/logs/web.stdout.0', { follow: true, signal: ctl.signal })) {
      text += chunk.toString();
      if (text.includes('\n')) ctl.abort();
    }
    expect(text).to.equal('hello from web\n');
    expect((await r.fs.readAt('alloc/logs/web.stdout.0', 6, 4)).toString()).to.equal('from');
    const err = await r.fs.readAt('web/secrets/x', 0, 1).catch((e) => e);
    expect(err).to.be.instanceOf(SecretFileReadError);
    expect(r.fs).to.equal(r.fs); // one instance per runner
  });
});
