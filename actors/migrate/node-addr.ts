/**
 * Nomad's `remotePrevAlloc.getNodeAddr`: ask the servers for the node that ran the previous
 * allocation and turn it into the base URL of its HTTP API.
 *
 * ```
 * rpc.getNode(nodeId)
 *   ├─ error ──► wait retry.baseMs + random()*retry.staggerMs on the clock, ask again (until cancelled)
 *   ├─ node null ──► BerthError: node "<id>" not found
 *   └─ node ──► (tlsEnabled ? "https://" : "http://") + httpAddr
 * ```
 * @module
 */
import { BerthError } from '../../model/errors.ts';
import type { ServerRPC } from '../watchers/types.ts';
import { backOff } from '../watchers/retry.ts';
import type { RemoteWatchOptions } from '../watchers/remote.ts';
import { errorText } from '../../model/error-text.ts';

/** Options of {@link getNodeAddr}: the same retrying-RPC options a remote watcher takes. */
export type NodeAddrOptions = RemoteWatchOptions;

/** The node lookup answered that the node does not exist. */
export class NodeNotFoundError extends BerthError {
  constructor(readonly nodeId: string) {
    super(`node ${JSON.stringify(nodeId)} not found`);
  }
}

/**
 * Resolves with `http://<httpAddr>` or `https://<httpAddr>` of `nodeId`. RPC errors are retried
 * until `signal` aborts (then it rejects with `signal.reason`).
 *
 * @throws NodeNotFoundError when the servers do not know the node.
 * @example
 * const base = await getNodeAddr('node-a', { rpc, signal }); // "http://10.0.0.7:4646"
 */
export async function getNodeAddr(nodeId: string, opts: NodeAddrOptions): Promise<string> {
  const { rpc, signal } = opts;
  for (;;) {
    signal.throwIfAborted();
    let resp: Awaited<ReturnType<ServerRPC['getNode']>>;
    try {
      resp = await rpc.getNode({ nodeId }, signal);
    } catch (err) {
      signal.throwIfAborted();
      await backOff(opts, errorText(err));
      continue;
    }
    signal.throwIfAborted();
    const node = resp.node;
    if (!node) throw new NodeNotFoundError(nodeId);
    if (!node.httpAddr) throw new BerthError(`node ${JSON.stringify(nodeId)} has no HTTP address`);
    return `${node.tlsEnabled ? 'https' : 'http'}://${node.httpAddr}`;
  }
}
