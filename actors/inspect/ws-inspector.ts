/**
 * Inspection over WebSocket to the Stately inspector, built on `@statelyai/inspect`'s
 * `createInspector` (event shaping, serialisation) with an adapter of our own, because the
 * package's WebSocket adapter has two sharp edges for an embedded runtime: it keeps only 200
 * events until the socket opens, and it retries every 5 s forever (also after `stop()` during
 * connect), keeping the host process alive. This adapter buffers up to `maxDeferredEvents`
 * (default 100,000), retries with an unref'd timer a bounded number of times, and `stop()`
 * cancels everything.
 * @module
 */
import { createInspector } from '@statelyai/inspect';
import WebSocket from 'ws';
import { BerthError } from '../../model/errors.ts';
import type { InspectionObserver } from '../runner/api.ts';

/** JSON without cycles or actor refs (an @xstate.actor snapshot holds live child refs). */
function safeStringify(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_k, v: unknown) => {
    if (typeof v === 'object' && v !== null) {
      if (seen.has(v)) return undefined;
      seen.add(v);
      if ('sessionId' in v && 'send' in v) return { id: (v as { id?: string }).id }; // an actor ref
    }
    return typeof v === 'function' ? undefined : v;
  });
}

/** Options for {@link connectInspector}. */
export interface WsInspectorOptions {
  /** e.g. ws://127.0.0.1:8080 (what `createInspectorServer` listens on). */
  url: string;
  /** Events held until the socket opens; older ones are dropped beyond this (default 100,000). */
  maxDeferredEvents?: number;
  /** Delay between connection attempts (default 1000 ms). */
  retryMs?: number;
  /** Attempts before giving up (default 30); `ready` then rejects. */
  maxAttempts?: number;
}

/** A running WebSocket inspector. */
export interface WsInspector {
  /** Pass as `ClientOptions.inspect`. */
  inspect: InspectionObserver;
  /** Resolves once connected (deferred events flushed); rejects after maxAttempts failures. */
  ready: Promise<void>;
  /** Events sent over the socket so far. */
  sent(): number;
  /** Flushes what it can, closes the socket, cancels retries. Idempotent. */
  stop(): Promise<void>;
}

/** Connects an inspector to a WebSocket relay such as `@statelyai/inspect/server`. */
export function connectInspector(opts: WsInspectorOptions): WsInspector {
  const max = opts.maxDeferredEvents ?? 100_000;
  const retryMs = opts.retryMs ?? 1000;
  const maxAttempts = opts.maxAttempts ?? 30;
  let ws: WebSocket | undefined;
  let open = false;
  let stopped = false;
  let attempts = 0;
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const deferred: string[] = [];
  let resolveReady!: () => void;
  let rejectReady!: (e: Error) => void;
  const ready = new Promise<void>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  ready.catch(() => {}); // callers that never await it must not see an unhandled rejection

  const connect = () => {
    if (stopped) return;
    attempts++;
    const sock = new WebSocket(opts.url);
    ws = sock;
    sock.on('open', () => {
      open = true;
      for (const m of deferred.splice(0)) {
        sock.send(m);
        sent++;
      }
      resolveReady();
    });
    sock.on('error', () => {}); // 'close' follows; retry there
    sock.on('close', () => {
      open = false;
      if (ws !== sock || stopped) return;
      if (attempts >= maxAttempts) {
        rejectReady(new BerthError(`inspector: could not connect to ${opts.url} after ${attempts} attempts`));
        return;
      }
      timer = setTimeout(connect, retryMs);
      timer.unref();
    });
  };

  const adapter = {
    start: connect,
    stop() {},
    send(event: unknown) {
      const text = safeStringify(event);
      if (open && ws) {
        ws.send(text);
        sent++;
      } else {
        deferred.push(text);
        if (deferred.length > max) deferred.shift();
      }
    },
  };
  const inspector = createInspector(adapter as never, { autoStart: true });
  inspector.start(); // createInspector itself never starts its adapter

  return {
    inspect: inspector.inspect as InspectionObserver,
    ready,
    sent: () => sent,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (timer) clearTimeout(timer);
      const sock = ws;
      if (!sock) return;
      if (sock.readyState === WebSocket.OPEN) {
        await new Promise<void>((res) => {
          // A peer that never answers the close handshake gets terminated after a second.
          const force = setTimeout(() => sock.terminate(), 1000);
          force.unref();
          sock.once('close', () => {
            clearTimeout(force);
            res();
          });
          sock.close();
        });
      } else sock.terminate();
      rejectReady(new BerthError('inspector stopped'));
    },
  };
}
