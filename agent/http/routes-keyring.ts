/**
 * Nomad's keyring routes: `GET /v1/operator/keyring/keys` (every root key's metadata) and
 * `PUT /v1/operator/keyring/rotate` (a new active key; `?full` seals every variable again with it).
 * @module
 */
import { ApiError } from './errors.ts';
import { KEY_ALGORITHM, type RootKeyMeta } from '../variables/keyring.ts';
import type { VariableStore } from '../variables/variables.ts';
import { VariableKeyMissingError, KeystoreFileError, VariableDecryptError } from '../variables/errors.ts';
import type { Router } from './router.ts';

/** Nomad's `RootKeyMeta` (no prepublished keys on berth: `PublishTime` is 0). */
export const apiRootKeyMeta = (k: RootKeyMeta): Record<string, unknown> => ({
  KeyID: k.keyId,
  Algorithm: k.algorithm,
  CreateTime: k.createTime,
  CreateIndex: k.createIndex,
  ModifyIndex: k.modifyIndex,
  State: k.state,
  PublishTime: 0,
});

/** Adds the keyring routes over `store`'s keyring. */
export function keyringRoutes(r: Router, store: VariableStore): void {
  const { keyring } = store;
  r.on('GET', '/v1/operator/keyring/keys', () => {
    const keys = keyring.list();
    return { body: keys.map(apiRootKeyMeta), index: Math.max(1, ...keys.map((k) => k.modifyIndex)) };
  });
  r.on('PUT', '/v1/operator/keyring/rotate', (req) => {
    const algo = req.query.get('algo');
    if (algo !== null && algo !== '' && algo !== KEY_ALGORITHM)
      throw new ApiError(400, `algo: berth's keyring uses "${KEY_ALGORITHM}" only, not ${JSON.stringify(algo)}`);
    const publish = req.query.get('publish_time');
    if (publish !== null && publish !== '' && publish !== '0')
      throw new ApiError(400, 'publish_time: berth does not prepublish keys (it signs no workload identities)');
    // Nomad reads `full` by its presence; `full=false` is taken at its word.
    const full = req.query.has('full') && req.query.get('full') !== 'false';
    let key: RootKeyMeta;
    try {
      key = store.rotate(full);
    } catch (e) {
      if (e instanceof VariableKeyMissingError || e instanceof KeystoreFileError || e instanceof VariableDecryptError)
        throw new ApiError(500, `full rotation refused, nothing changed: ${e.message}`);
      throw e;
    }
    return { body: { Key: apiRootKeyMeta(key), Index: key.modifyIndex }, index: key.modifyIndex };
  });
}
