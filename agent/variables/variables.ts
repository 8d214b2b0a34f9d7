/**
 * The agent's variables over its state and keyring: reads open the sealed items with the key
 * their row names, writes seal them with the active key, and both follow Nomad's check-and-set
 * (`cas`): 0 means "only if there is none", N means "only if its modify index is N", and a
 * refused write answers the variable as it is (Nomad's 409 body). Rotation makes a new active key;
 * `full` seals every variable again with it, in the same commit.
 * @module
 */
import type { VariableData, VariableMeta } from '../../index.ts';
import type { AgentState } from '../state/store.ts';
import { varKey, type VarRecord } from '../state/types.ts';
import { openItems, sealItems } from './crypto.ts';
import type { Keyring, RootKeyMeta } from './keyring.ts';
import { checkItems, checkNamespace, checkPath } from './validate.ts';

/** A conflict's answer: the variable as it is, or (none there) its address with zero metadata and no items. */
export type Conflict = VariableMeta & { items: Record<string, string> | null };

/** What a check-and-set write did: done (with what it wrote, for a put), or refused with the conflict. */
export type WriteResult<T> = { ok: true; value: T; index: number } | { ok: false; conflict: Conflict };

/** A variable's metadata from its row. */
export const metaOf = (r: VarRecord): VariableMeta => ({
  namespace: r.namespace,
  path: r.path,
  createIndex: r.createIndex,
  modifyIndex: r.modifyIndex,
  createTime: r.createTime,
  modifyTime: r.modifyTime,
});

/** The agent's variable store. */
export class VariableStore {
  constructor(
    readonly state: AgentState,
    readonly keyring: Keyring,
  ) {}

  /** The index of the last change to any variable (what a list answers with). */
  index(): number {
    return this.state.waiters.indexOf(['vars']);
  }

  /** The sealed row at `path` in `namespace`. */
  record(namespace: string, path: string): VarRecord | undefined {
    return this.state.vars.get(varKey(namespace, path));
  }

  /**
   * `r` with its items opened.
   * @throws VariableKeyMissingError when its key file is gone; VariableDecryptError when it does not open.
   */
  open(r: VarRecord): VariableData {
    return { ...metaOf(r), items: openItems(this.keyring.key(r.sealed.keyId, r.path), r.sealed, r) };
  }

  /** The variable at `path` in `namespace`, opened; undefined when there is none. */
  read(namespace: string, path: string): VariableData | undefined {
    const r = this.record(namespace, path);
    return r && this.open(r);
  }

  /** The metadata of every variable under `prefix` in `namespace` (`*`: every namespace), by namespace then path. */
  list(namespace: string, prefix: string): VariableMeta[] {
    const out: VariableMeta[] = [];
    for (const r of this.state.vars.values()) if ((namespace === '*' || r.namespace === namespace) && r.path.startsWith(prefix)) out.push(metaOf(r));
    return out.sort((a, b) => (a.namespace === b.namespace ? cmp(a.path, b.path) : cmp(a.namespace, b.namespace)));
  }

  /**
   * Writes `items` at `path` in `namespace`, sealed with the active key; with `cas`, only as
   * Nomad's check-and-set allows.
   * @throws InvalidVariableError for a path, namespace or items Nomad refuses.
   */
  put(namespace: string, path: string, items: Record<string, string> | null | undefined, cas?: number): WriteResult<VariableData> {
    checkNamespace(namespace);
    checkPath(path);
    checkItems(items);
    const cur = this.record(namespace, path);
    const conflict = this.#casConflict(namespace, path, cur, cas);
    if (conflict) return { ok: false, conflict };
    const { keyId, key } = this.keyring.active();
    const now = Date.now() * 1e6;
    return this.state.commit((txn) => {
      const rec: VarRecord = {
        namespace,
        path,
        createIndex: cur?.createIndex ?? txn.index,
        modifyIndex: txn.index,
        createTime: cur?.createTime ?? now,
        modifyTime: now,
        sealed: sealItems(key, keyId, { namespace, path }, items),
      };
      txn.putVar(rec);
      return { ok: true, value: { ...metaOf(rec), items: { ...items } }, index: txn.index };
    });
  }

  /** Removes the variable at `path` in `namespace` (none there: done, nothing written); with `cas`, as Nomad's check-and-set allows. */
  delete(namespace: string, path: string, cas?: number): WriteResult<undefined> {
    checkNamespace(namespace);
    const cur = this.record(namespace, path);
    if (!cur && (cas === undefined || cas === 0)) return { ok: true, value: undefined, index: this.index() };
    const conflict = this.#casConflict(namespace, path, cur, cas);
    if (conflict) return { ok: false, conflict };
    const index = this.state.commit((txn) => {
      txn.deleteVar(namespace, path);
      return txn.index;
    });
    return { ok: true, value: undefined, index };
  }

  /**
   * Makes a new root key the active one; with `full`, every variable is opened and sealed again
   * with it, in the same commit (so the old key files may then go).
   * @throws VariableKeyMissingError (and nothing changes) when `full` meets a variable whose key is gone.
   */
  rotate(full: boolean): RootKeyMeta {
    const opened = full ? [...this.state.vars.values()].map((r) => this.open(r)) : [];
    const fresh = this.keyring.create();
    return this.state.commit((txn) => {
      const meta = this.keyring.activate(txn, fresh);
      for (const v of opened) {
        const r = this.record(v.namespace, v.path)!;
        txn.putVar({ ...r, sealed: sealItems(fresh.key, fresh.keyId, r, v.items) });
      }
      return meta;
    });
  }

  /** Nomad's check-and-set: the conflict `cas` meets at `cur`, or undefined when the write may go ahead. */
  #casConflict(namespace: string, path: string, cur: VarRecord | undefined, cas: number | undefined): Conflict | undefined {
    if (cas === undefined) return undefined;
    if (!cur) return cas === 0 ? undefined : { namespace, path, createIndex: 0, modifyIndex: 0, createTime: 0, modifyTime: 0, items: null };
    if (cas === cur.modifyIndex) return undefined;
    return this.open(cur);
  }
}

/** Byte-order comparison, as Go sorts strings (not the locale's). */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
