/**
 * berth's own viewer and recorder for a client: what they show (the client's actor, its runners,
 * the host's attached actors), where a task's logs are read, and the messages a late feed missed.
 * Nothing is hooked until a viewer or a recording is asked for.
 * @module
 */
import type { AnyActorRef } from 'xstate';
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../model/clock.ts';
import { taskGroupOf } from '../../model/status.ts';
import type { AllocRunnerImpl } from '../runner/alloc-runner.ts';
import { ClientViewers } from '../viewer/client-viewers.ts';
import { seedMessages } from '../viewer/seed.ts';
import type { HostActors } from './host-actors.ts';

/** The client's {@link ClientViewers}, reading `runners` and `hostActors` as they are when asked. */
export function clientViewers(parts: {
  bus: Bus;
  clock: Clock;
  clientActor: AnyActorRef;
  runners: ReadonlyMap<string, AllocRunnerImpl>;
  hostActors: HostActors;
}): ClientViewers {
  const { bus, clock, clientActor, runners, hostActors } = parts;
  return new ClientViewers({
    bus,
    now: () => clock.now(),
    roots: () => [clientActor, ...[...runners.values()].map((r) => r.actor), ...hostActors.actors()],
    logSource: (id) => {
      const r = runners.get(id);
      return (
        r && {
          logsDir: r.allocDir.logsDir,
          tasks: taskGroupOf(r.alloc()).tasks.map((t) => t.name),
          logs: (task, stream, o) => r.logs(task, stream, o),
          ended: r.streamsEnded,
        }
      );
    },
    seed: () => seedMessages([...runners.values()], (id) => runners.get(id)?.alloc(), clock.now()),
  });
}
