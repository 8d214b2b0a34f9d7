/**
 * A client's viewers: the feed (made on first use, dropped again when nothing needs it), its
 * recorder, and its servers. The client calls {@link ClientViewers.attach} for each alloc actor
 * before starting it; with no viewer and no recording that is a no-op, so inspection costs
 * nothing when off.
 * @module
 */
import type { AnyActorRef } from 'xstate';
import type { Bus } from '../../bus/bus.ts';
import type { BusMessage } from '../../bus/messages.ts';
import { ViewerFeed } from './feed.ts';
import { startRecording, type Recorder } from './recording.ts';
import { startViewerServer, type ViewerLogSource, type ViewerServeOptions, type ViewerServer } from './server.ts';

/** What the viewers need from their client. */
export interface ViewerHost {
  bus: Bus;
  now: () => number;
  /** The root actors alive now (the client's and every alloc's). */
  roots(): AnyActorRef[];
  /** A live alloc's logs, or undefined when the client has no such alloc. */
  logSource(allocId: string): ViewerLogSource | undefined;
  /** What a feed made late missed: messages rebuilt from the allocs' current state (seed.ts). */
  seed?(): BusMessage[];
}

/** See the module doc. */
export class ClientViewers {
  readonly #host: ViewerHost;
  #feed: ViewerFeed | undefined;
  #recorder: Recorder | undefined;
  readonly #servers = new Set<ViewerServer>();
  #closed = false;

  constructor(host: ViewerHost) {
    this.#host = host;
  }

  /** The feed, while a viewer or a recording uses it. */
  get feed(): ViewerFeed | undefined {
    return this.#feed;
  }

  /** The feed, made without roots: callers subscribe first (a recorder), then attach them. */
  #ensureFeed(): ViewerFeed {
    this.#feed ??= new ViewerFeed({ bus: this.#host.bus, now: this.#host.now });
    return this.#feed;
  }

  #attachAll(feed: ViewerFeed) {
    for (const r of this.#host.roots()) feed.attach(r);
    feed.seed(this.#host.seed?.() ?? []);
  }

  /** Hooks a new root actor (call before starting it). */
  attach(root: AnyActorRef): void {
    this.#feed?.attach(root);
  }

  /** Starts recording to `file` (one recording per client). */
  record(file: string): Recorder {
    if (this.#recorder) return this.#recorder;
    const fresh = !this.#feed;
    const feed = this.#ensureFeed();
    try {
      this.#recorder = startRecording(feed, file, this.#host.now);
    } catch (e) {
      if (fresh) this.#dropFeed();
      throw e;
    }
    if (fresh) this.#attachAll(feed);
    return this.#recorder;
  }

  /** Starts a viewer server on this client's feed. */
  async serve(opts: ViewerServeOptions = {}): Promise<ViewerServer> {
    const fresh = !this.#feed;
    const feed = this.#ensureFeed();
    if (fresh) this.#attachAll(feed);
    let srv: ViewerServer;
    try {
      srv = await startViewerServer({ mode: 'live', feed, logSource: (id) => this.#host.logSource(id) }, opts);
    } catch (e) {
      this.#maybeDropFeed();
      throw e;
    }
    this.#servers.add(srv);
    if (this.#closed) await srv.close();
    return {
      ...srv,
      close: async () => {
        this.#servers.delete(srv);
        await srv.close();
        this.#maybeDropFeed();
      },
    };
  }

  #maybeDropFeed() {
    if (!this.#servers.size && !this.#recorder) this.#dropFeed();
  }

  #dropFeed() {
    this.#feed?.close();
    this.#feed = undefined;
  }

  /** Closes every server and the recording (flushed), and unhooks the feed. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#servers].map((s) => s.close()));
    this.#servers.clear();
    await this.#recorder?.close();
    this.#recorder = undefined;
    this.#dropFeed();
  }
}
