/**
 * The allocation files `berth init` writes, and what each field means.
 * @module
 */

/** A one-shot batch job: runs once, its exit code is `berth run`'s. */
export const BATCH_EXAMPLE = {
  job: {
    id: 'hello',
    type: 'batch',
    taskGroups: [
      {
        name: 'main',
        tasks: [{ name: 'hello', driver: 'raw_exec', config: { command: '/bin/sh', args: ['-c', 'echo "hello from $NOMAD_TASK_NAME in $NOMAD_ALLOC_ID"'] } }],
      },
    ],
  },
  taskGroup: 'main',
};

/** A long-running service: restarted when it exits, until stopped (Ctrl-C). */
export const SERVICE_EXAMPLE = {
  job: {
    id: 'ticker',
    type: 'service',
    taskGroups: [
      {
        name: 'main',
        restartPolicy: { attempts: 2, intervalMs: 60000, delayMs: 1000, mode: 'fail' },
        tasks: [
          {
            name: 'ticker',
            driver: 'raw_exec',
            config: { command: '/bin/sh', args: ['-c', 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 1; done'] },
            killTimeoutMs: 2000,
          },
        ],
      },
    ],
  },
  taskGroup: 'main',
};

/** One line per field of the examples, printed by `berth init`. */
export const FIELD_NOTES = `What the fields mean (berth's JSON; Nomad API JSON with PascalCase names works too):
  id                 the allocation's UUID; berth run fills a random one when left out
  nodeId             the node it runs on; berth run fills "local" when left out
  job.id             the job's name (jobId is taken from it)
  job.type           batch: run once, done when the tasks exit; service: keep running, restart
                     on exit (the default, as in Nomad); also system, sysbatch
  job.taskGroups     the groups of tasks; the allocation runs one of them
  taskGroup          the name of the group this allocation runs
  tasks[].name       the task's name (also its directory name)
  tasks[].driver     raw_exec (a host process), exec (chroot + namespaces, root only), mock_driver
  tasks[].config     the driver's settings: command and args for raw_exec and exec
  tasks[].lifecycle  {"hook": "prestart" | "poststart" | "poststop", "sidecar": true} for helper tasks
  restartPolicy      attempts within intervalMs, delayMs between, then mode "fail" or "delay"
  killTimeoutMs      how long a task gets after its kill signal (default SIGINT) before SIGKILL
Durations are milliseconds. More examples: examples/ in the berth package.`;
