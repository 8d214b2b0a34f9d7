/** A client on a fresh temp data dir, torn down (destroyed allocs, removed dir) after each test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter, take, toArray, type Observable } from 'rxjs';
import { createClient } from '../../actors/client/client.ts';
import { mountsUnder, unmount } from '../../actors/allocdir/mounts.ts';
import type { Client, ClientOptions } from '../../actors/client/types.ts';
import type { BusMessage, BusMessageType } from '../../bus/messages.ts';

/** Creates clients for one test file and cleans them up. */
export function useTempClients() {
  const made: Array<{ client: Client; dir: string }> = [];
  afterEach(async () => {
    for (const { client, dir } of made.splice(0)) {
      await Promise.allSettled(client.runners().map((r) => r.destroy()));
      await client.shutdown();
      // Safety net: a failed test may leave tmpfs mounts behind; never rm through a mount.
      for (const m of await mountsUnder(dir)) await unmount(m, { lazy: true }).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return (opts: Partial<ClientOptions> = {}): Client & { dataDir: string } => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-test-'));
    let client: Client;
    try {
      client = createClient({ dataDir: dir, ...opts });
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    made.push({ client, dir });
    return Object.assign(client, { dataDir: dir });
  };
}

/** Collects bus messages of one kind until `stop()`. */
export function record<T extends BusMessageType>(client: Client, type: T): { items: BusMessage<T>[]; stop(): void } {
  const items: BusMessage<T>[] = [];
  const sub = client.bus.of(type).subscribe((m) => items.push(m));
  return { items, stop: () => sub.unsubscribe() };
}

/** The first message matching `pred`. */
export function nextMessage<T extends BusMessageType>(client: Client, type: T, pred: (m: BusMessage<T>) => boolean = () => true): Promise<BusMessage<T>> {
  return firstValueFrom(client.bus.of(type).pipe(filter(pred)));
}

/** The first n values of a stream. */
export function firstN<T>(o: Observable<T>, n: number): Promise<T[]> {
  return firstValueFrom(o.pipe(take(n), toArray()));
}

/** Resolves once `pred(runner.alloc())` holds: at once if it already does, else on a later update. */
export function viewWhere(
  client: Client,
  runner: { allocId: string; alloc(): import('../../model/types.ts').Allocation },
  pred: (a: import('../../model/types.ts').Allocation) => boolean,
): Promise<void> {
  if (pred(runner.alloc())) return Promise.resolve();
  return firstValueFrom(client.bus.of('alloc.updated').pipe(filter((m) => m.allocId === runner.allocId && pred(m.alloc)))).then(() => undefined);
}
