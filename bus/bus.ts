/**
 * The in-process message bus every actor publishes to. An RxJS Subject: publishing never blocks and
 * costs next to nothing when nobody listens; hosts subscribe to {@link Bus.messages$} or to one
 * kind with {@link Bus.of}.
 * @module
 */
import { Observable, Subject, filter } from 'rxjs';
import type { BusMessage, BusMessageMap, BusMessageType } from './messages.ts';

/** The message bus. */
export interface Bus {
  /** Every message, as published. */
  readonly messages$: Observable<BusMessage>;
  /** Messages of one kind. */
  of<T extends BusMessageType>(type: T): Observable<BusMessage<T>>;
  /** Publishes a message; `time` is filled in when absent. */
  publish<T extends BusMessageType>(type: T, payload: BusMessageMap[T]): void;
  /** Completes every stream; later publishes are ignored. Idempotent. */
  close(): void;
}

/**
 * Creates a bus.
 * @example
 * const bus = createBus();
 * bus.of('alloc.state').subscribe((m) => console.log(m.allocId, m.from, '->', m.to));
 */
export function createBus(now: () => number = Date.now): Bus {
  const subject = new Subject<BusMessage>();
  const messages$ = subject.asObservable();
  return {
    messages$,
    of<T extends BusMessageType>(type: T) {
      return messages$.pipe(filter((m): m is BusMessage<T> => m.type === type));
    },
    publish(type, payload) {
      // Also ignores publishes after close: a completed Subject lets go of its observers and takes no new ones.
      if (!subject.observed) return;
      subject.next({ type, time: now(), ...payload } as unknown as BusMessage);
    },
    close() {
      subject.complete();
    },
  };
}
