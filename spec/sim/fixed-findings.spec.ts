/**
 * Regression specs for the findings the simulator made (each was a "known open finding" with its
 * seed and shrunk op list until its fix landed): the shrunk run now holds every invariant.
 */
import { expect } from 'chai';
import { releaseSimDataDir, runSim } from '../../sim/world.ts';
import type { Op } from '../../sim/ops.ts';

interface Finding {
  id: string;
  what: string;
  seed: number;
  ops: Op[];
}

// Op lists as the shrinker printed them (JSON): their `op` fields are Op's literals.
const FIXED = [
  {
    id: 'terminal-status-reverts',
    what: "An alloc that arrived (or was restored) client-terminal reports the servers' client status again after any update: terminal, then pending.",
    seed: 4,
    ops: [
      {
        at: 37438,
        op: 'add',
        a: 3,
        spec: {
          type: 'batch',
          tasks: [
            { name: 'web', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 1, lifetimeMs: 1406 },
            { name: 'db', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0, hook: 'poststop', lifetimeMs: 1589 },
            { name: 'log', killTimeoutMs: 1000, killSignal: 'SIGTERM', exitCode: 0, lifetimeMs: 2365 },
          ],
          restart: { attempts: 2, delayMs: 50, intervalMs: 2000, mode: 'fail' },
        },
        prev: { a: 0 },
      },
      { at: 37649, op: 'restartTask', a: 3, task: 'web' },
      { at: 46780, op: 'crash' },
      { at: 47127, op: 'stop', a: 3 },
    ],
  },
  {
    id: 'restored-exit-reported-twice',
    what: 'A task restored while it waited out a restart delay reports its last exit again (a second Terminated): the handle row keeps `exited` after the exit was reported.',
    seed: 2,
    ops: [
      {
        at: 248,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 200, killSignal: 'SIGTERM', exitCode: 0, lifetimeMs: 3175 },
            { name: 'db', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 2715 },
            { name: 'log', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 1, lifetimeMs: 2013 },
          ],
          restart: { attempts: 2, delayMs: 1500, intervalMs: 60000, mode: 'delay' },
        },
      },
      { at: 12061, op: 'crash' },
    ],
  },
  {
    id: 'restored-setup-failure-orphans',
    what: 'A restored alloc whose alloc dir cannot be rebuilt marks its tasks dead (Setup Failure) without killing the processes its saved handles name: they run on, owned by nobody.',
    seed: 1,
    ops: [
      {
        at: 3004,
        op: 'add',
        a: 1,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 0 }],
          restart: { attempts: 3, delayMs: 50, intervalMs: 10000, mode: 'delay' },
          sticky: true,
        },
      },
      { at: 3941, op: 'crash' },
    ],
  },
  {
    id: 'failed-restore-leaves-process',
    what: 'When reattaching a handle saved before its start fails (executor unreachable), the task restarts while the process that start made still runs: two copies, one orphaned.',
    seed: 125,
    ops: [
      { at: 2929, op: 'crash' },
      { at: 3070, op: 'crash' },
      { at: 3157, op: 'crash' },
      { at: 7376, op: 'crash' },
      {
        at: 21450,
        op: 'add',
        a: 3,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 50, killSignal: 'SIGINT', exitCode: 1 }],
          restart: { attempts: 3, delayMs: 50, intervalMs: 2000, mode: 'fail' },
        },
      },
      { at: 21535, op: 'crash' },
    ],
  },
  {
    id: 'killed-without-terminated-after-restore',
    what: 'A task killed while it is being reattached reports Killed without the Terminated of the run the kill ended.',
    seed: 12,
    ops: [
      {
        at: 491,
        op: 'add',
        a: 0,
        spec: {
          type: 'batch',
          tasks: [
            { name: 'web', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 461 },
            { name: 'db', killTimeoutMs: 3000, killSignal: 'SIGTERM', exitCode: 0, lifetimeMs: 2924 },
          ],
          restart: { attempts: 3, delayMs: 1500, intervalMs: 10000, mode: 'delay' },
        },
      },
      { at: 1657, op: 'crash' },
      { at: 4052, op: 'crash' },
      { at: 4056, op: 'burst', as: [0, 1] },
    ],
  },
  {
    id: 'failed-wait-recorded-as-exit',
    what: 'A wait that failed (lost contact with the executor) is saved as the task exit before the process is killed; a host that dies in between restores that exit while the process lives, and the task is started again beside it.',
    seed: 66877,
    ops: [
      {
        at: 245,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 50, killSignal: 'SIGINT', exitCode: 0 },
            { name: 'db', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 1, hook: 'prestart', sidecar: true, lifetimeMs: 2700 },
            { name: 'log', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 1, lifetimeMs: 588 },
          ],
          restart: { attempts: 3, delayMs: 50, intervalMs: 2000, mode: 'delay' },
        },
      },
      { at: 484, op: 'crash' },
    ],
  },
  {
    id: 'setup-failure-kill-without-killing',
    what: 'A restored alloc whose alloc dir cannot be rebuilt kills its live tasks, but a task the Setup Failure already marked finished gets Terminated and Killed without the Killing before them.',
    seed: 1478,
    ops: [
      {
        at: 1745,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0 },
            { name: 'db', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 1, hook: 'poststop', lifetimeMs: 827 },
            { name: 'log', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 798 },
          ],
          restart: { attempts: 3, delayMs: 50, intervalMs: 10000, mode: 'delay' },
          sticky: true,
        },
      },
      { at: 25425, op: 'crash' },
      { at: 25459, op: 'crash' },
    ],
  },
  {
    id: 'restored-in-shutdown-delay-killed-without-terminated',
    what: 'A task restored while it waited out its shutdown_delay (state pending, process alive) whose reattach fails during the kill reports Killed without a Terminated for the run.',
    seed: 269,
    ops: [
      {
        at: 32,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 0, shutdownDelayMs: 1000 }],
          restart: { attempts: 0, delayMs: 50, intervalMs: 10000, mode: 'delay' },
        },
      },
      { at: 384, op: 'stop', a: 0 },
      { at: 678, op: 'crash' },
    ],
  },
  {
    id: 'dropped-poststop-starts-again',
    what: "A poststop task an update drops while it runs after a stop can start once more (its restart was already decided when the drop's kill came).",
    seed: 615,
    ops: [
      {
        at: 7169,
        op: 'add',
        a: 1,
        spec: {
          type: 'batch',
          tasks: [
            { name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 1, lifetimeMs: 2501 },
            { name: 'db', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 1, hook: 'poststop', lifetimeMs: 1953, shutdownDelayMs: 100 },
          ],
          restart: { attempts: 1, delayMs: 300, intervalMs: 60000, mode: 'delay' },
          failingHooks: ['destroy'],
        },
      },
      { at: 8746, op: 'stop', a: 1 },
      { at: 10320, op: 'dropTask', a: 1, task: 'db' },
    ],
  },
  {
    id: 'failed-wait-kill-fails',
    what: "After a restore, a wait that lost its executor recorded the exit though the one SIGKILL meant to end the process failed too: dead broadcast, and complete, while the process lived. (I1; fixed: every kill that must end a process retries on Nomad's back-off)",
    seed: 109878,
    ops: [
      {
        at: 193,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 1840 },
            { name: 'db', killTimeoutMs: 1000, killSignal: 'SIGTERM', exitCode: 0, hook: 'poststart', sidecar: true },
            { name: 'log', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 1, hook: 'poststart', sidecar: true },
          ],
          restart: { attempts: 3, delayMs: 1500, intervalMs: 10000, mode: 'fail' },
          sticky: true,
          shutdownDelayMs: 200,
        },
      },
      { at: 441, op: 'crash' },
      { at: 635, op: 'stop', a: 0 },
    ],
  },
  {
    id: 'failed-wait-kill-fails-restarts-beside',
    what: "A failed wait whose SIGKILL failed let the restart policy start the task again beside the live process. (I5; fixed: every kill that must end a process retries on Nomad's back-off)",
    seed: 127306,
    ops: [
      {
        at: 2701,
        op: 'add',
        a: 1,
        spec: {
          type: 'batch',
          tasks: [{ name: 'web', killTimeoutMs: 50, killSignal: 'SIGTERM', exitCode: 0, lifetimeMs: 3360 }],
          restart: { attempts: 1, delayMs: 300, intervalMs: 60000, mode: 'delay' },
          shutdownDelayMs: 2000,
        },
      },
      {
        at: 2956,
        op: 'add',
        a: 2,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 3000, killSignal: 'SIGTERM', exitCode: 1 }],
          restart: { attempts: 2, delayMs: 50, intervalMs: 60000, mode: 'fail' },
          sticky: true,
          shutdownDelayMs: 200,
        },
      },
      { at: 4006, op: 'crash' },
      { at: 4050, op: 'crash' },
    ],
  },
  {
    id: 'failed-wait-kill-fails-after-delay',
    what: "The same, on a task with a shutdown delay: a second copy ran beside the first. (I5; fixed: every kill that must end a process retries on Nomad's back-off)",
    seed: 134471,
    ops: [
      {
        at: 2597,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 1000, killSignal: 'SIGTERM', exitCode: 0, lifetimeMs: 1772, shutdownDelayMs: 100 }],
          restart: { attempts: 0, delayMs: 300, intervalMs: 60000, mode: 'delay' },
          sticky: true,
          shutdownDelayMs: 2000,
        },
      },
      {
        at: 3275,
        op: 'add',
        a: 1,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 50, killSignal: 'SIGTERM', exitCode: 1 }],
          restart: { attempts: 2, delayMs: 50, intervalMs: 60000, mode: 'fail' },
          sticky: true,
        },
      },
      { at: 3535, op: 'crash' },
      { at: 4603, op: 'burst', as: [1] },
      { at: 4695, op: 'crash' },
      {
        at: 8182,
        op: 'add',
        a: 3,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0 },
            { name: 'db', killTimeoutMs: 200, killSignal: 'SIGTERM', exitCode: 1, hook: 'prestart', lifetimeMs: 1209 },
          ],
          restart: { attempts: 3, delayMs: 50, intervalMs: 60000, mode: 'fail' },
        },
      },
      { at: 8305, op: 'crash' },
      {
        at: 8403,
        op: 'add',
        a: 4,
        spec: {
          type: 'batch',
          tasks: [
            { name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 1 },
            { name: 'db', killTimeoutMs: 50, killSignal: 'SIGINT', exitCode: 1, hook: 'prestart', sidecar: true, lifetimeMs: 1801 },
            { name: 'log', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 449 },
          ],
          restart: { attempts: 1, delayMs: 300, intervalMs: 2000, mode: 'fail' },
          sticky: true,
        },
      },
      { at: 9493, op: 'crash' },
    ],
  },
  {
    id: 'failed-wait-kill-fails-sidecar',
    what: "The same on a sidecar after two host crashes: client status failed while its process lived. (I1; fixed: every kill that must end a process retries on Nomad's back-off)",
    seed: 135699,
    ops: [
      { at: 10856, op: 'crash' },
      { at: 11426, op: 'crash' },
      {
        at: 33062,
        op: 'add',
        a: 2,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 50, killSignal: 'SIGTERM', exitCode: 0, lifetimeMs: 875, shutdownDelayMs: 100 },
            { name: 'log', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 0, hook: 'prestart', lifetimeMs: 2006, shutdownDelayMs: 5000 },
          ],
          restart: { attempts: 0, delayMs: 300, intervalMs: 2000, mode: 'fail' },
          shutdownDelayMs: 2000,
        },
      },
      { at: 33204, op: 'crash' },
      { at: 33327, op: 'crash' },
    ],
  },
  {
    id: 'failed-restore-kill-fails',
    what: "A reattach that failed killed the old process once; when that kill failed too, the task restarted beside it. (I5; fixed: every kill that must end a process retries on Nomad's back-off)",
    seed: 135830,
    ops: [
      {
        at: 12228,
        op: 'add',
        a: 1,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 200, killSignal: 'SIGTERM', exitCode: 0 },
            { name: 'db', killTimeoutMs: 50, killSignal: 'SIGTERM', exitCode: 0 },
            { name: 'log', killTimeoutMs: 50, killSignal: 'SIGINT', exitCode: 1 },
          ],
          restart: { attempts: 1, delayMs: 50, intervalMs: 2000, mode: 'delay' },
        },
      },
      { at: 12294, op: 'crash' },
      { at: 14841, op: 'crash' },
      {
        at: 24182,
        op: 'add',
        a: 2,
        spec: {
          type: 'batch',
          tasks: [
            { name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 424 },
            { name: 'db', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 1, lifetimeMs: 403 },
          ],
          restart: { attempts: 1, delayMs: 1500, intervalMs: 2000, mode: 'delay' },
        },
      },
      { at: 24229, op: 'restartAll', a: 1 },
      { at: 24443, op: 'crash' },
    ],
  },
  {
    id: 'restored-exit-in-shutdown-delay-runs-again',
    what: 'A task whose process exited while it waited out its shutdown delay (state pending) and whose host died before the exit was reported was started again on restore: Started without Terminated. (I6; fixed: a saved exit is reported when the run is open by its events, not only when the state says running)',
    seed: 1932,
    ops: [
      {
        at: 194,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 200, killSignal: 'SIGTERM', exitCode: 0, lifetimeMs: 3042 },
            { name: 'db', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0, hook: 'prestart', sidecar: true, shutdownDelayMs: 1000 },
          ],
          restart: { attempts: 1, delayMs: 50, intervalMs: 10000, mode: 'fail' },
        },
      },
      { at: 258, op: 'destroy', a: 0 },
      {
        at: 324,
        op: 'add',
        a: 1,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 200, killSignal: 'SIGTERM', exitCode: 0 }],
          restart: { attempts: 0, delayMs: 300, intervalMs: 60000, mode: 'delay' },
          sticky: true,
        },
      },
      { at: 1059, op: 'signal', a: 1, sig: 'SIGHUP' },
      {
        at: 16477,
        op: 'add',
        a: 2,
        spec: {
          type: 'batch',
          tasks: [{ name: 'web', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 830, shutdownDelayMs: 5000 }],
          restart: { attempts: 3, delayMs: 300, intervalMs: 2000, mode: 'fail' },
          shutdownDelayMs: 200,
          maxRunDurationMs: 300,
        },
      },
      { at: 17082, op: 'crash' },
    ],
  },
  {
    id: 'restored-exit-in-shutdown-delay-killed-open',
    what: 'The same window, killed after the restore: Killed while its run had not Terminated. (I6; fixed: a saved exit is reported when the run is open by its events, not only when the state says running)',
    seed: 6646,
    ops: [
      {
        at: 215,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 1101, shutdownDelayMs: 1000 },
            { name: 'db', killTimeoutMs: 3000, killSignal: 'SIGTERM', exitCode: 0, lifetimeMs: 496 },
            { name: 'log', killTimeoutMs: 50, killSignal: 'SIGTERM', exitCode: 1 },
          ],
          restart: { attempts: 2, delayMs: 1500, intervalMs: 10000, mode: 'delay' },
          shutdownDelayMs: 200,
        },
      },
      {
        at: 14371,
        op: 'add',
        a: 1,
        spec: {
          type: 'batch',
          tasks: [
            { name: 'web', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 2235 },
            { name: 'db', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 1, lifetimeMs: 928 },
            { name: 'log', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 186, shutdownDelayMs: 100 },
          ],
          restart: { attempts: 0, delayMs: 50, intervalMs: 60000, mode: 'delay' },
        },
      },
      {
        at: 14653,
        op: 'add',
        a: 2,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 1, shutdownDelayMs: 100 }],
          restart: { attempts: 2, delayMs: 300, intervalMs: 60000, mode: 'fail' },
        },
      },
      { at: 22419, op: 'destroy', a: 2 },
      { at: 22652, op: 'crash' },
    ],
  },
  {
    id: 'restored-exit-in-shutdown-delay-3052',
    what: 'The same window (a second shape from the soak). (I6; fixed: a saved exit is reported when the run is open by its events, not only when the state says running)',
    seed: 3052,
    ops: [
      {
        at: 230,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 50, killSignal: 'SIGINT', exitCode: 1, lifetimeMs: 196 }],
          restart: { attempts: 3, delayMs: 50, intervalMs: 10000, mode: 'delay' },
          sticky: true,
        },
      },
      {
        at: 7145,
        op: 'add',
        a: 1,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 544 },
            { name: 'db', killTimeoutMs: 50, killSignal: 'SIGTERM', exitCode: 0 },
            { name: 'log', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 1, shutdownDelayMs: 100 },
          ],
          restart: { attempts: 2, delayMs: 50, intervalMs: 10000, mode: 'fail' },
          failingHooks: ['postrun'],
          shutdownDelayMs: 200,
        },
      },
      { at: 7374, op: 'crash' },
      { at: 8796, op: 'crash' },
    ],
  },
  {
    id: 'restored-exit-in-shutdown-delay-7809',
    what: 'The same window (a third shape from the soak). (I6; fixed: a saved exit is reported when the run is open by its events, not only when the state says running)',
    seed: 7809,
    ops: [
      {
        at: 36239,
        op: 'add',
        a: 2,
        spec: {
          type: 'service',
          tasks: [
            { name: 'web', killTimeoutMs: 3000, killSignal: 'SIGTERM', exitCode: 0 },
            { name: 'db', killTimeoutMs: 3000, killSignal: 'SIGINT', exitCode: 0, shutdownDelayMs: 5000 },
          ],
          restart: { attempts: 0, delayMs: 300, intervalMs: 2000, mode: 'delay' },
          sticky: true,
          shutdownDelayMs: 2000,
        },
      },
      {
        at: 36350,
        op: 'add',
        a: 3,
        spec: {
          type: 'batch',
          tasks: [{ name: 'web', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 1320, shutdownDelayMs: 5000 }],
          restart: { attempts: 2, delayMs: 50, intervalMs: 2000, mode: 'fail' },
          failingHooks: ['postrun'],
          maxRunDurationMs: 300,
        },
      },
      { at: 38243, op: 'crash' },
    ],
  },
  {
    id: 'failed-restore-in-shutdown-delay-then-crash',
    what: 'A task restored in its shutdown delay whose reattach failed (Failed Restoring Task ends the run) was taken, after a second crash, for one whose run was still open: the checker flagged Killed without Terminated (I6; the checker and the chart now both end a run at Failed Restoring Task or Driver Failure, not only at Terminated)',
    seed: 10159,
    ops: [
      {
        at: 168,
        op: 'add',
        a: 0,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0 }],
          restart: { attempts: 3, delayMs: 300, intervalMs: 2000, mode: 'delay' },
        },
      },
      { at: 3995, op: 'stopNoDelay', a: 0 },
      {
        at: 8502,
        op: 'add',
        a: 1,
        spec: {
          type: 'batch',
          tasks: [{ name: 'web', killTimeoutMs: 200, killSignal: 'SIGINT', exitCode: 1, shutdownDelayMs: 1000 }],
          restart: { attempts: 1, delayMs: 50, intervalMs: 10000, mode: 'delay' },
          shutdownDelayMs: 200,
          maxRunDurationMs: 300,
        },
      },
      { at: 9227, op: 'crash' },
      { at: 9387, op: 'crash' },
    ],
  },
  {
    id: 'restart-all-revives-task-dead-during-group-delay',
    what: "A restartAll now waits the group's shutdown_delay first (Nomad's group services hook in PreTaskRestart); a batch task that finished during that wait was revived by it, and the checker, which cleared its finished set when restartAll was asked, flagged the revived run (I5; the checker now takes a task's Restart Signaled after the request as its revive)",
    seed: 3194,
    ops: [
      {
        at: 6425,
        op: 'add',
        a: 1,
        spec: {
          type: 'batch',
          tasks: [
            { name: 'web', killTimeoutMs: 50, killSignal: 'SIGINT', exitCode: 0, lifetimeMs: 3170 },
            { name: 'db', killTimeoutMs: 50, killSignal: 'SIGINT', exitCode: 1, lifetimeMs: 412 },
            { name: 'log', killTimeoutMs: 50, killSignal: 'SIGINT', exitCode: 0, shutdownDelayMs: 100 },
          ],
          restart: { attempts: 2, delayMs: 1500, intervalMs: 60000, mode: 'delay' },
          failingHooks: ['postrun'],
          shutdownDelayMs: 2000,
        },
      },
      { at: 6719, op: 'restartAll', a: 1 },
    ],
  },
  {
    id: 'two-restart-alls-revive-a-finished-prestart-once',
    what: "Two restartAlls 30 ms apart, both waiting out the same preTaskRestart hooks, while a prestart task exits by itself: berth revives it once, as Nomad's ForceRestart reruns a dead task whose run is still active, and the second request finds it pending and is ignored (Nomad's ErrTaskNotRunning). The revival's Restart Signaled carries the first request's time, and the checker only accepted one at or after the latest request (I5; it now accepts the time of any restartAll asked for)",
    seed: 16477,
    ops: [
      {
        at: 3883,
        op: 'add',
        a: 1,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0 }],
          restart: { attempts: 2, delayMs: 1500, intervalMs: 60000, mode: 'delay' },
        },
      },
      {
        at: 5539,
        op: 'add',
        a: 2,
        spec: {
          type: 'service',
          tasks: [{ name: 'web', killTimeoutMs: 3000, killSignal: 'SIGTERM', exitCode: 1, lifetimeMs: 261, shutdownDelayMs: 1000 }],
          restart: { attempts: 1, delayMs: 300, intervalMs: 2000, mode: 'delay' },
          sticky: true,
        },
      },
      {
        at: 21017,
        op: 'add',
        a: 3,
        spec: {
          type: 'batch',
          tasks: [
            { name: 'web', killTimeoutMs: 3000, killSignal: 'SIGTERM', exitCode: 0 },
            { name: 'log', killTimeoutMs: 1000, killSignal: 'SIGINT', exitCode: 0, hook: 'prestart', lifetimeMs: 119 },
          ],
          restart: { attempts: 2, delayMs: 50, intervalMs: 2000, mode: 'delay' },
          sticky: true,
          shutdownDelayMs: 200,
        },
        preempted: [{ a: 2 }],
      },
      { at: 21077, op: 'stop', a: 2 },
      { at: 21334, op: 'restartAll', a: 3 },
      { at: 21364, op: 'restartAll', a: 3 },
    ],
  },
] as unknown as Finding[];

describe('sim: fixed findings hold every invariant on their shrunk runs', function () {
  after(releaseSimDataDir);
  this.timeout(60_000);
  for (const k of FIXED) {
    it(`${k.id} (seed ${k.seed}): ${k.what}`, async () => {
      const r = await runSim({ seed: k.seed, ops: k.ops, trace: false });
      expect(r.violations.map((v) => `${v.invariant}: ${v.message}`)).to.deep.equal([]);
    });
  }
});
