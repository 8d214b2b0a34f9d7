/**
 * Nomad's variable routes: `GET|PUT|DELETE /v1/var/*path` (the path may hold `/`) and
 * `GET /v1/vars?prefix=`, in the namespace of `?namespace=` (default `default`; a body's
 * `Namespace` wins for a write, as on Nomad). Reads are blocking queries: a list on the variables'
 * index, a read on the variable's own modify index (as Nomad answers it). A check-and-set write
 * (`?cas=N`) that does not hold answers 409 with the variable as it is; a delete answers 204.
 * @module
 */
import type { VariableData, VariableMeta } from '../../index.ts';
import { ApiError } from './errors.ts';
import type { AgentState } from '../state/store.ts';
import { KeystoreFileError, VariableDecryptError, VariableKeyMissingError } from '../variables/errors.ts';
import { checkNamespace } from '../variables/validate.ts';
import type { Conflict, VariableStore, WriteResult } from '../variables/variables.ts';
import { blocking, minIndexOf, waitMs } from './blocking.ts';
import { decodeBody, variableBody } from './bodies.ts';
import type { Handler, Reply, Req, Router } from './router.ts';

/** Nomad's `VariableMetadata` (its `Lock` always null: berth has no variable locks). */
export const apiVariableMeta = (v: VariableMeta): Record<string, unknown> => ({
  Namespace: v.namespace,
  Path: v.path,
  Lock: null,
  CreateIndex: v.createIndex,
  CreateTime: v.createTime,
  ModifyIndex: v.modifyIndex,
  ModifyTime: v.modifyTime,
});

/** Nomad's `VariableDecrypted`: the metadata and the items by key, as Go encodes a map (null for a conflict with no variable). */
export const apiVariable = (v: VariableData | Conflict): Record<string, unknown> => ({
  ...apiVariableMeta(v),
  Items:
    v.items &&
    Object.fromEntries(
      Object.keys(v.items)
        .sort()
        .map((k) => [k, v.items![k]]),
    ),
});

/** The request's namespace: `?namespace=`, default `default`. */
const namespaceOf = (req: Req, wildcard = false): string => {
  const ns = req.query.get('namespace') || 'default';
  checkNamespace(ns, wildcard);
  return ns;
};

/** `?cas=`: undefined when absent, the index otherwise (Nomad's 400 for one that is not). */
function casOf(req: Req): number | undefined {
  const raw = req.query.get('cas');
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw new ApiError(400, `can not parse cas: ${JSON.stringify(raw)} is not an index`);
  return Number(raw);
}

/** A key the keyring lacks, or sealed items that do not open, is the server's trouble: 500, with its text. */
function serverSide<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof VariableKeyMissingError || e instanceof KeystoreFileError || e instanceof VariableDecryptError) throw new ApiError(500, e.message);
    throw e;
  }
}

/** A write's answer: 409 with the conflict (its index its modify index), or `ok`'s. */
const written = <T>(r: WriteResult<T>, ok: (value: T, index: number) => Reply): Reply =>
  r.ok ? ok(r.value, r.index) : { status: 409, body: apiVariable(r.conflict), index: r.conflict.modifyIndex };

/**
 * Parks a read with `?index=N` until `indexOf()` passes N, `?wait=` runs out, the client goes,
 * or the state closes; every change to a variable wakes it to look again.
 */
async function waitPast(state: AgentState, req: Req, indexOf: () => number): Promise<void> {
  const min = minIndexOf(req.query);
  if (min === 0) return;
  const wait = waitMs(req.query);
  const deadline = Date.now() + wait + Math.random() * (wait / 16);
  let gone = false;
  const stop = req.onClose(() => (gone = true));
  try {
    while (!gone && !state.closed && indexOf() <= min && Date.now() < deadline)
      await state.waiters.wait(['vars'], state.waiters.indexOf(['vars']), deadline, req.onClose);
  } finally {
    stop();
  }
}

/** Adds the variable routes over `store`. */
export function variableRoutes(r: Router, store: VariableStore): void {
  const { state } = store;
  r.on(
    'GET',
    '/v1/vars',
    blocking(state, ['vars'], (req) => store.list(namespaceOf(req, true), req.query.get('prefix') ?? '').map(apiVariableMeta)),
  );

  const read: Handler = async (req) => {
    const ns = namespaceOf(req);
    const path = req.params.path!;
    await waitPast(state, req, () => store.record(ns, path)?.modifyIndex ?? store.index());
    const v = serverSide(() => store.read(ns, path));
    if (v) return { body: apiVariable(v), index: v.modifyIndex };
    // Nomad's 404 carries the query's index too.
    const text = 'variable not found';
    req.res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'X-Nomad-Index': store.index() });
    req.res.end(text);
  };
  r.on('GET', '/v1/var/*path', read);

  r.on('PUT', '/v1/var/*path', async (req) => {
    const body = await decodeBody(req, variableBody);
    const cas = casOf(req);
    const ns = body.Namespace || namespaceOf(req);
    return written(
      serverSide(() => store.put(ns, req.params.path!, body.Items, cas)),
      (v, index) => ({ body: apiVariable(v), index }),
    );
  });

  r.on('DELETE', '/v1/var/*path', (req) => {
    const cas = casOf(req);
    const r = serverSide(() => store.delete(namespaceOf(req), req.params.path!, cas));
    if (!r.ok) return written(r, () => ({ body: null }));
    req.res.writeHead(204, { 'X-Nomad-Index': r.index, 'X-Nomad-KnownLeader': 'true', 'X-Nomad-LastContact': 0 });
    req.res.end();
  });
}
