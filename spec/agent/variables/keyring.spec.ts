/**
 * The agent's keyring on real key files: made at the first start (0600 in a 0700 dir), rotated
 * through Nomad's endpoint (old variables stay readable with their old key; `?full` seals every
 * variable again, so the old key file may go), and a key file gone or damaged: a typed error
 * for what it sealed, or a failed start naming the file, never a crash. Restarts are a new
 * agent on the same data dir.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeystoreFileError, VariableKeyMissingError } from '../../../agent/variables/errors.ts';
import { keystoreDir } from '../../../agent/variables/keyring.ts';
import { startVarAgent, stopVarAgent, varDataDir, type VarAgent } from './support.ts';

type Key = { KeyID: string; State: string; Algorithm: string; CreateTime: number };

describe('agent: the variables keyring', function () {
  this.timeout(60_000);
  let a: VarAgent | undefined;
  let dir: string;
  beforeEach(async () => {
    dir = varDataDir();
    a = await startVarAgent(dir);
  });
  afterEach(() => stopVarAgent(a, dir));
  const restart = async () => {
    await a!.agent.close();
    a = undefined;
    a = await startVarAgent(dir);
  };
  const keys = async (): Promise<Key[]> => (await a!.req('GET', '/v1/operator/keyring/keys')).json;

  it('lists one active key at the first start, and keeps it across a restart', async () => {
    const first = await keys();
    expect(first).to.have.length(1);
    expect(first[0]).to.include({ State: 'active', Algorithm: 'aes256-gcm' });
    expect(Object.keys(first[0]!)).to.include.members(['KeyID', 'Algorithm', 'CreateTime', 'State']);
    expect(readdirSync(keystoreDir(dir))).to.deep.equal([`${first[0]!.KeyID}.nks.json`]);
    await restart();
    expect(await keys()).to.deep.equal(first);
  });

  it('rotates: a new active key seals new writes; what the old one sealed stays readable', async () => {
    await a!.req('PUT', '/v1/var/before', { Items: { v: 'old' } });
    const [old] = await keys();
    const rot = await a!.req('PUT', '/v1/operator/keyring/rotate');
    expect(rot.status).to.equal(200);
    expect(rot.json.Key).to.include({ State: 'active' });
    expect(rot.json.Key.KeyID).not.to.equal(old!.KeyID);
    expect((await keys()).map((k) => [k.KeyID, k.State])).to.deep.equal([
      [old!.KeyID, 'inactive'],
      [rot.json.Key.KeyID, 'active'],
    ]);
    await a!.req('PUT', '/v1/var/after', { Items: { v: 'new' } });
    const { store } = a!.agent.variables;
    expect(store.record('default', 'before')!.sealed.keyId).to.equal(old!.KeyID);
    expect(store.record('default', 'after')!.sealed.keyId).to.equal(rot.json.Key.KeyID);
    await restart();
    expect((await a!.req('GET', '/v1/var/before')).json.Items).to.deep.equal({ v: 'old' });
    expect((await a!.req('GET', '/v1/var/after')).json.Items).to.deep.equal({ v: 'new' });
  });

  it('?full seals every variable again with the new key: the old key file may then go', async () => {
    const put = await a!.req('PUT', '/v1/var/full/x', { Items: { v: 'kept' } });
    const [old] = await keys();
    const rot = await a!.req('PUT', '/v1/operator/keyring/rotate?full=true');
    const rec = a!.agent.variables.store.record('default', 'full/x')!;
    expect(rec.sealed.keyId).to.equal(rot.json.Key.KeyID);
    // Its metadata is the variable's own: a new seal is no change to it.
    expect(rec.modifyIndex).to.equal(put.json.ModifyIndex);
    rmSync(join(keystoreDir(dir), `${old!.KeyID}.nks.json`));
    await restart();
    expect((await a!.req('GET', '/v1/var/full/x')).json.Items).to.deep.equal({ v: 'kept' });
  });

  it('a variable whose key file is gone is a typed error (500 over HTTP), not a crash; writes go on with a new key', async () => {
    await a!.req('PUT', '/v1/var/lost/x', { Items: { v: 'sealed' } });
    const [old] = await keys();
    const file = join(keystoreDir(dir), `${old!.KeyID}.nks.json`);
    rmSync(file);
    await restart();
    expect(a!.log.join('\n')).to.include(`root key ${old!.KeyID} is not in the keystore`);
    const r = await a!.req('GET', '/v1/var/lost/x');
    expect(r.status).to.equal(500);
    expect(r.text).to.equal(
      `variable "lost/x": root key ${old!.KeyID} is not in the keystore (${file} is missing): put the key file back, or purge the variables sealed with it`,
    );
    expect(() => a!.agent.variables.store.read('default', 'lost/x')).to.throw(VariableKeyMissingError);
    // The list still shows it (metadata is in clear); a new active key took over.
    expect((await a!.req('GET', '/v1/vars')).json.map((v: { Path: string }) => v.Path)).to.deep.equal(['lost/x']);
    expect((await keys()).map((k) => k.State)).to.deep.equal(['inactive', 'active']);
    expect((await a!.req('PUT', '/v1/var/new/y', { Items: { v: '1' } })).status).to.equal(200);
    // A full rotation cannot seal it again: refused, nothing changes.
    const full = await a!.req('PUT', '/v1/operator/keyring/rotate?full');
    expect([full.status, full.text]).to.deep.equal([500, `full rotation refused, nothing changed: ${r.text}`]);
    expect(await keys()).to.have.length(2);
    // Purged, it is gone; the source of the trouble with it.
    expect((await a!.req('DELETE', '/v1/var/lost/x')).status).to.equal(204);
    expect((await a!.req('PUT', '/v1/operator/keyring/rotate?full')).status).to.equal(200);
  });

  it('a damaged active key file is a failed start naming the file', async () => {
    const [k] = await keys();
    await a!.agent.close();
    a = undefined;
    const file = join(keystoreDir(dir), `${k!.KeyID}.nks.json`);
    writeFileSync(file, '{"KeyID": "not it"}');
    let err: unknown;
    try {
      a = await startVarAgent(dir);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(KeystoreFileError);
    expect((err as Error).message).to.equal(`keystore file ${file}: holds key "not it", not ${k!.KeyID}`);
  });

  it('a key file that is not JSON, of another algorithm or not 32 bytes is a KeystoreFileError naming the file', async () => {
    const [k] = await keys();
    await a!.agent.close();
    a = undefined;
    const file = join(keystoreDir(dir), `${k!.KeyID}.nks.json`);
    const good = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
    const damaged: Array<[string, string]> = [
      ['{not json', 'is not JSON'],
      [JSON.stringify({ ...good, Algorithm: 'xchacha20' }), 'Algorithm is "xchacha20", not "aes256-gcm"'],
      [JSON.stringify({ ...good, Key: Buffer.alloc(16).toString('base64') }), 'Key is not 32 bytes of base64'],
    ];
    for (const [text, why] of damaged) {
      writeFileSync(file, text);
      const err = await startVarAgent(dir).then(
        (started) => ((a = started), undefined),
        (e: Error) => e,
      );
      expect(err, why).to.be.instanceOf(KeystoreFileError);
      expect(err!.message).to.equal(`keystore file ${file}: ${why}`);
    }
  });

  it('refuses an algorithm other than aes256-gcm and a prepublish, as berth has neither', async () => {
    expect((await a!.req('PUT', '/v1/operator/keyring/rotate?algo=xchacha20')).status).to.equal(400);
    expect((await a!.req('PUT', '/v1/operator/keyring/rotate?publish_time=1')).status).to.equal(400);
    expect(await keys()).to.have.length(1);
  });
});
