/**
 * Sealing a variable's items (`agent/variables/crypto.ts`): AES-256-GCM with a fresh nonce per
 * write, the tag kept, and the namespace and path bound as additional data.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { KEY_BYTES, openItems, sealItems } from '../../../agent/variables/crypto.ts';
import { VariableDecryptError } from '../../../agent/variables/errors.ts';

describe('agent: sealing variable items', () => {
  const key = randomBytes(KEY_BYTES);
  const at = { namespace: 'default', path: 'app/db' };
  const items = { user: 'admin', pass: 'hunter2' };

  it('each seal has a fresh 12-byte nonce and a 16-byte tag, and opens at its own address', () => {
    const a = sealItems(key, 'k1', at, items);
    const b = sealItems(key, 'k1', at, items);
    expect(Buffer.from(a.nonce, 'base64')).to.have.length(12);
    expect(Buffer.from(a.tag, 'base64')).to.have.length(16);
    expect(a.nonce).to.not.equal(b.nonce);
    expect(a.data).to.not.equal(b.data);
    expect(a.keyId).to.equal('k1');
    expect(openItems(key, a, at)).to.deep.equal(items);
    expect(openItems(key, b, at)).to.deep.equal(items);
  });

  it('a sealed row does not open at another path or namespace, with another key, or altered', () => {
    const sealed = sealItems(key, 'k1', at, items);
    const flipped = Buffer.from(sealed.data, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    const refused = [
      () => openItems(key, sealed, { namespace: 'default', path: 'app/other' }),
      () => openItems(key, sealed, { namespace: 'prod', path: 'app/db' }),
      () => openItems(randomBytes(KEY_BYTES), sealed, at),
      () => openItems(key, { ...sealed, data: flipped.toString('base64') }, at),
    ];
    for (const open of refused) expect(open).to.throw(VariableDecryptError);
  });
});
