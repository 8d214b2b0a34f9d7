/**
 * The agent's one management token. Nomad's servers make it when an operator first calls
 * `POST /v1/acl/bootstrap`; berth's agent makes it at its first start with ACLs on and logs it,
 * so the bootstrap is done before the port opens and the endpoint never hands it out (it answers
 * Nomad's 400 "ACL bootstrap already done (reset index: N)").
 *
 * The reset works as Nomad's: an operator who lost the token writes the reset index into
 * `<data_dir>/server/acl-bootstrap-reset`; at its next start the agent makes a new token (the old
 * one stops working), logs it, and removes the file.
 *
 * The token has an accessor id of its own (a UUID kept beside it), as Nomad's tokens do: what
 * `/v1/acl/token/self` shows, and what may be logged or shared where the secret must not.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentState } from './store.ts';

/** The file that lets the next start make a new management token (Nomad's name). */
export const ACL_RESET_FILE = 'acl-bootstrap-reset';

/** The index the bootstrap was done at: what a reset file must name. */
export const aclResetIndex = (state: AgentState): number => (state.meta.get('aclBootstrapIndex') as number | undefined) ?? 0;

/** What the reset file asks for: its index, or undefined when there is no file. */
function readResetFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * The management token: the one kept in `state`, a new one when there is none or a reset file in
 * `serverDir` names the current reset index. A new token is committed (with its reset index)
 * before it is returned.
 */
export function managementToken(state: AgentState, serverDir: string, log: (line: string) => void): string {
  const kept = state.meta.get('managementToken') as string | undefined;
  const file = join(serverDir, ACL_RESET_FILE);
  const asked = kept ? readResetFile(file) : undefined;
  let reset = false;
  if (asked !== undefined) {
    const want = aclResetIndex(state);
    if (asked === String(want)) reset = true;
    else log(`ignoring ${file}: it names reset index ${JSON.stringify(asked)}, the reset index is ${want}`);
  }
  if (kept && !reset) {
    // State from before the reset index (or the accessor) was kept: the bootstrap is dated now.
    if (!state.meta.has('aclBootstrapIndex') || !state.meta.has('managementAccessor'))
      state.commit((txn) => {
        if (!state.meta.has('aclBootstrapIndex')) txn.putMeta('aclBootstrapIndex', txn.index);
        if (!state.meta.has('managementAccessor')) {
          txn.putMeta('managementAccessor', randomUUID());
          txn.putMeta('managementTokenCreateTime', Date.now());
        }
      });
    return kept;
  }
  const token = randomUUID();
  state.commit((txn) => {
    txn.putMeta('managementToken', token);
    txn.putMeta('aclBootstrapIndex', txn.index);
    txn.putMeta('managementAccessor', randomUUID());
    txn.putMeta('managementTokenCreateTime', Date.now());
  });
  if (reset) {
    rmSync(file, { force: true });
    log(`ACL bootstrap reset (${file}): the old management token no longer works`);
  }
  return token;
}

/** The management token as an ACL token record (what `/v1/acl/token/self` and the bootstrap answer). */
export interface ManagementTokenInfo {
  accessorId: string;
  secretId: string;
  /** ms since the epoch. */
  createTime: number;
  /** The index it was made at (the bootstrap's). */
  createIndex: number;
}

/** The kept management token's record, or undefined when there is none (ACLs off). */
export function managementTokenInfo(state: AgentState): ManagementTokenInfo | undefined {
  const secretId = state.meta.get('managementToken') as string | undefined;
  if (!secretId) return undefined;
  return {
    accessorId: (state.meta.get('managementAccessor') as string | undefined) ?? '',
    secretId,
    createTime: (state.meta.get('managementTokenCreateTime') as number | undefined) ?? 0,
    createIndex: aclResetIndex(state),
  };
}
