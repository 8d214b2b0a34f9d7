/**
 * `acl { enabled = true }` and the `tls` block: every request but Nomad's anonymous ones needs
 * `X-Nomad-Token` (403 "Permission denied" otherwise, as Nomad), the API is HTTPS only, and the
 * CLI reaches it with `$NOMAD_CACERT` and `$BERTH_TOKEN`.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentProcess, http } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';
import { makeTestPki, type TestPki } from '../support/test-certs.ts';

describe('agent: ACL tokens and TLS', function () {
  this.timeout(60_000);
  let dir: string;
  let pki: TestPki;
  let agent: AgentProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-agent-tls-'));
    pki = await makeTestPki(dir);
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
    delete process.env.NOMAD_CACERT;
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS only, and refuses requests without the management token', async () => {
    const cfg = join(dir, 'agent.hcl');
    writeFileSync(
      cfg,
      `acl {
  enabled = true
}
tls {
  http      = true
  ca_file   = "${pki.caFile}"
  cert_file = "${pki.serverCertFile}"
  key_file  = "${pki.serverKeyFile}"
}
`,
    );
    agent = await new AgentProcess(['-dev', '-config', cfg]).ready();
    expect(agent.url).to.match(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(agent.token).to.match(/^[0-9a-f-]{36}$/);
    const ca = readFileSync(pki.caFile);

    const anonymous = await http('GET', `${agent.url}/v1/jobs`, undefined, { ca });
    expect([anonymous.status, anonymous.text]).to.deep.equal([403, 'Permission denied']);
    const wrong = await http('GET', `${agent.url}/v1/jobs`, undefined, { ca, headers: { 'X-Nomad-Token': 'not-it' } });
    expect(wrong.status).to.equal(403);
    const leader = await http('GET', `${agent.url}/v1/status/leader`, undefined, { ca });
    expect(leader.status).to.equal(200);
    const ok = await http('GET', `${agent.url}/v1/jobs`, undefined, { ca, headers: { 'X-Nomad-Token': agent.token! } });
    expect([ok.status, ok.json]).to.deep.equal([200, []]);
    const bearer = await http('GET', `${agent.url}/v1/nodes`, undefined, { ca, headers: { Authorization: `Bearer ${agent.token}` } });
    expect(bearer.status).to.equal(200);
    // Plain HTTP to the TLS port gets no API answer.
    const plain = await http('GET', `${agent.url.replace('https:', 'http:')}/v1/status/leader`).catch((e: Error) => e);
    expect(plain instanceof Error || (plain as { status: number }).status === 400).to.equal(true);

    process.env.NOMAD_CACERT = pki.caFile;
    const cli = await agent.cli(['node', 'status']);
    expect(cli.code, cli.stderr).to.equal(0);
    expect(cli.stdout).to.match(/ready/);
  });

  it('with verify_https_client, only a client certificate signed by ca_file gets an answer', async () => {
    await agent?.stop();
    const cfg = join(dir, 'mtls.hcl');
    writeFileSync(
      cfg,
      `tls {
  http                = true
  ca_file             = "${pki.caFile}"
  cert_file           = "${pki.serverCertFile}"
  key_file            = "${pki.serverKeyFile}"
  verify_https_client = true
}
`,
    );
    agent = await new AgentProcess(['-dev', '-config', cfg]).ready();
    const url = `${agent.url}/v1/status/leader`;
    const get = (pair?: [string, string]) =>
      new Promise<number | Error>((resolve) => {
        const req = httpsRequest(url, { ca: readFileSync(pki.caFile), ...(pair && { cert: readFileSync(pair[0]), key: readFileSync(pair[1]) }) }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', resolve);
        req.end();
      });
    expect(await get([pki.clientCertFile, pki.clientKeyFile])).to.equal(200);
    expect(await get()).to.be.instanceOf(Error);
    expect(await get([pki.strangerCertFile, pki.strangerKeyFile])).to.be.instanceOf(Error);
  });
});
