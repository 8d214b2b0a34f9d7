// The mutation groups: what each mutates (folders where it can, so a file moved inside one stays
// covered), the specs that prove it, and the score below which `npm run mutate` fails.
// Type-only and re-export files are left out: Stryker finds nothing to mutate in them anyway.
export const GROUPS = {
  machines: {
    mutate: ['machines/**/*.ts'],
    // The chart specs (stub effects, simulated clock: a second for all) and the watcher specs,
    // which run the watcher chart. The client specs also drive the charts, but at ~0.4 s a test
    // a surviving mutant would cost minutes: what they prove belongs in chart specs.
    spec: ['spec/machines/**/*.spec.ts', 'spec/actors/watchers/*.spec.ts'],
    threshold: 85,
  },
  bus: {
    mutate: ['bus/**/*.ts'],
    spec: ['spec/bus/**/*.spec.ts'],
    threshold: 85,
  },
  model: {
    mutate: ['model/**/*.ts'],
    // parse-bound.spec.ts is left out: each of its runs reads a million values (seconds).
    spec: ['spec/model/**/*.spec.ts', 'spec/bus/**/*.spec.ts', 'spec/machines/**/*.spec.ts', 'spec/claims/{berth-errors,known-findings}.spec.ts'],
    threshold: 85,
  },
  security: {
    mutate: [
      'actors/allocdir/escape.ts',
      'actors/allocdir/restore.ts',
      'actors/allocdir/write-all.ts',
      'actors/allocfs/**/*.ts',
      'actors/viewer/server.ts',
      'actors/migrate/snapshot-server.ts',
      'actors/migrate/remote-stream.ts',
      'actors/migrate/serve.ts',
    ],
    // Fast, direct specs first in each area: a mutant runs its covering tests in this order and
    // stops at the first failure, so one a quick spec kills never waits for a slow one's timeout.
    spec: [
      'spec/actors/allocdir/escape.spec.ts',
      'spec/actors/allocdir/write-all.spec.ts',
      'spec/actors/allocdir/restore-edges.spec.ts',
      'spec/actors/allocdir/restore-hostile.spec.ts',
      'spec/actors/allocdir/snapshot.spec.ts',
      'spec/property/restore.property.spec.ts',
      'spec/actors/artifacts/hostile-artifacts.spec.ts',
      'spec/actors/artifacts/artifact-user.spec.ts',
      'spec/actors/allocfs/**/*.spec.ts',
      'spec/actors/client/alloc-fs.spec.ts',
      'spec/actors/viewer/server-hostile.spec.ts',
      'spec/actors/viewer/loopback.spec.ts',
      'spec/actors/viewer/backpressure.spec.ts',
      'spec/actors/viewer/viewer.spec.ts',
      'spec/actors/migrate/snapshot-server.spec.ts',
      'spec/actors/migrate/fetch-snapshot.spec.ts',
      'spec/actors/migrate/remote-migrate.spec.ts',
      'spec/actors/migrate/hostile-peer.spec.ts',
      'spec/actors/migrate/remote-stream.spec.ts',
    ],
    threshold: 75,
  },
  // The agent's HTTP auth and routing: the one edge decision (Host, Origin, Content-Type, the
  // matched route's token rule), the router, the request-target parse, the JSON depth bound and
  // the viewer's one-time codes. The pure specs first; the ACL table over every route next.
  'agent-http': {
    mutate: ['agent/http/edge.ts', 'agent/http/router.ts', 'agent/http/target.ts', 'agent/http/json-depth.ts', 'agent/http/one-time-codes.ts'],
    spec: ['spec/agent/http/*.spec.ts', 'spec/agent/variables/router.spec.ts', 'spec/agent/http-edge.spec.ts', 'spec/agent/edge.spec.ts'],
    threshold: 90,
  },
  // The command line against a loopback far side (Nomad-shaped answers) or its pure parts; the
  // specs that run a real agent (spec/agent/cli*.spec.ts) are left out: seconds a test. Not
  // examples.spec.ts (it needs dist/).
  cli: {
    mutate: ['bin/cli/**/*.ts'],
    spec: [
      'spec/bin/outcome.spec.ts',
      'spec/bin/plan-diff.spec.ts',
      'spec/bin/cli-output.spec.ts',
      'spec/bin/api-flags.spec.ts',
      'spec/bin/job-run-outcome.spec.ts',
      'spec/bin/job-validate.spec.ts',
      'spec/bin/init.spec.ts',
      'spec/bin/traps.spec.ts',
      'spec/bin/progress.spec.ts',
      'spec/bin/cli.spec.ts',
      'spec/bin/run.spec.ts',
    ],
    threshold: 80,
  },
  // The agent's scheduler: pure functions of a state view and a job (reconcile, feasibility,
  // placement, scoring, ports, preemption, rescheduling, updates), proved by their own specs and
  // the plan application that consumes them.
  scheduler: {
    mutate: ['agent/scheduler/**/*.ts', '!agent/scheduler/types.ts', '!agent/scheduler/index.ts'],
    spec: ['spec/agent/scheduler/*.spec.ts', 'spec/agent/broker/apply-plan.spec.ts'],
    threshold: 85,
  },
  // The job file reader: HCL2 (lexer, parser, evaluator, functions), the jobspec decode, its
  // defaults and canonicalization, the refusals named by stanza.
  jobspec: {
    mutate: ['agent/jobspec/**/*.ts', '!agent/jobspec/index.ts'],
    spec: ['spec/agent/jobspec/**/*.spec.ts', 'spec/agent/jobspec.spec.ts', 'spec/agent/jobspec-parser.spec.ts'],
    threshold: 85,
  },
  // The server half's state: the SQLite store (commit, reopen, version bound, compaction), the
  // blocking-query waiters, the management token, the data dir lock, the dead dev agents' sweep,
  // the job status. Pure and real-SQLite specs first; the sweep's (a client restore per dir) last.
  // Not spec/agent/dev-sweep.spec.ts or acl-bootstrap.spec.ts: they run agents (seconds a test).
  'agent-state': {
    mutate: ['agent/state/**/*.ts'],
    spec: [
      'spec/agent/state/job-status.spec.ts',
      'spec/agent/state/damaged-state.spec.ts',
      'spec/agent/state/store.spec.ts',
      'spec/agent/blocking.spec.ts',
      'spec/agent/server-gc.spec.ts',
      'spec/agent/state/acl-token.spec.ts',
      'spec/agent/state/data-dir-lock.spec.ts',
      'spec/agent/state/dev-sweep.spec.ts',
    ],
    threshold: 80,
  },
  // The eval broker and plan application: the pure parts (a refused alloc, applyPlan, the eval
  // chart) first, then the broker and planFor on real SQLite and a real in-process client (mock driver).
  'agent-broker': {
    mutate: ['agent/broker/**/*.ts'],
    spec: [
      'spec/agent/broker/refused.spec.ts',
      'spec/agent/broker/apply-plan.spec.ts',
      'spec/agent/broker/eval-machine.spec.ts',
      'spec/agent/broker/broker.spec.ts',
      'spec/agent/broker/eval-actors.spec.ts',
      'spec/agent/broker/plan-for.spec.ts',
    ],
    threshold: 80,
  },
  // Deployments and canaries: the record a plan writes, health verdicts, operator actions,
  // promotion, auto_revert (pure or on real SQLite), the watchers; then the plan application and
  // the broker that drive them. Not deployment.spec.ts or canary.spec.ts (real tasks over HTTP).
  'agent-deploy': {
    mutate: ['agent/deploy/**/*.ts'],
    spec: [
      'spec/agent/deploy/deployments.spec.ts',
      'spec/agent/deploy/canaries.spec.ts',
      'spec/agent/deploy-canaries.spec.ts',
      'spec/agent/deploy/watchers.spec.ts',
      'spec/agent/deploy/watcher-machine.spec.ts',
      'spec/agent/deploy/rollback.spec.ts',
      'spec/agent/broker/apply-plan.spec.ts',
      'spec/agent/broker/broker.spec.ts',
    ],
    threshold: 80,
  },
  // The server half's operations (agent/core.ts, the wiring) and the pure decisions it calls:
  // a client report's merge and health, the enforce-index refusals, dispatch idempotency, the
  // periodic check. Table specs first, then the core on real parts (spec/support/server-half.ts:
  // SQLite, a real client, the jobspec worker). Not the HTTP specs: seconds a test.
  'agent-core': {
    mutate: [
      'agent/core.ts',
      'agent/allocs/**/*.ts',
      'agent/node/**/*.ts',
      'agent/jobs/enforce-index.ts',
      'agent/jobs/periodic-check.ts',
      'agent/jobs/dispatch.ts',
      'agent/jobs/job-version.ts',
    ],
    spec: [
      'spec/agent/allocs/*.spec.ts',
      'spec/agent/node/*.spec.ts',
      'spec/agent/jobs/enforce-index.spec.ts',
      'spec/agent/jobs/periodic-check.spec.ts',
      'spec/agent/jobs/dispatch.spec.ts',
      'spec/agent/core.spec.ts',
      'spec/agent/core-operations.spec.ts',
    ],
    threshold: 80,
  },
  // The agent file and flags, the plugin blocks, port ranges, the host's ports, the node
  // fingerprint and drivers: pure readers first, then the HCL files (config.spec.ts). Not
  // dynamic-ports.spec.ts: most of its tests run an agent.
  'agent-config': {
    mutate: ['agent/config/**/*.ts'],
    spec: [
      'spec/agent/config/read-config.spec.ts',
      'spec/agent/config/plugins.spec.ts',
      'spec/agent/config/ports.spec.ts',
      'spec/agent/config/fingerprint.spec.ts',
      'spec/agent/node-drivers.spec.ts',
      'spec/agent/config.spec.ts',
    ],
    threshold: 80,
  },
  // The client's effectful actors (issue #41), one group per folder. Files the security group
  // mutates (allocdir, allocfs, migrate, viewer) stay there.
  // The client gc: the limiter, the options and the collector across its host boundary (plain
  // runners, a test clock), then on a real client (held clock), then on a real tmpfs (root).
  'actors-gc': {
    mutate: ['actors/gc/**/*.ts', '!actors/gc/index.ts'],
    spec: [
      'spec/actors/gc/limiter.spec.ts',
      'spec/actors/gc/options.spec.ts',
      'spec/actors/gc/runner-facts.spec.ts',
      'spec/actors/gc/fs-usage.spec.ts',
      'spec/actors/gc/collector-direct.spec.ts',
      'spec/actors/gc/collector.spec.ts',
      'spec/actors/gc/tmpfs.spec.ts',
    ],
    threshold: 80,
  },
  // The client's SQLite state store, and the gc that drops collected allocs from it. Not
  // damage.spec.ts: each of its tests kills and restarts a client (seconds a test).
  'actors-state': {
    mutate: ['actors/state/**/*.ts'],
    spec: ['spec/actors/state/state-store.spec.ts', 'spec/actors/state/store-edges.spec.ts', 'spec/actors/gc/collector.spec.ts'],
    threshold: 80,
  },
  // Cgroups: the pure parts first (usage format, keyed queue, detection on mountinfo text and
  // fake cgroupfs trees, file readers), usage from /proc of real processes, then real tasks in
  // real cgroups (root).
  'actors-cgroups': {
    mutate: ['actors/cgroups/**/*.ts', '!actors/cgroups/index.ts'],
    spec: [
      'spec/actors/cgroups/format-usage.spec.ts',
      'spec/actors/cgroups/keyed-queue.spec.ts',
      'spec/actors/cgroups/usage-parts.spec.ts',
      'spec/actors/cgroups/detect-parts.spec.ts',
      'spec/actors/cgroups/fake-cgroupfs.spec.ts',
      'spec/actors/cgroups/proc-usage.spec.ts',
      'spec/actors/cgroups/v2-unified.spec.ts',
      'spec/actors/cgroups/failed-start.spec.ts',
      'spec/actors/cgroups/fallback.spec.ts',
      'spec/actors/cgroups/restore.spec.ts',
      'spec/actors/cgroups/orphan.spec.ts',
      'spec/actors/cgroups/v1-client.spec.ts',
    ],
    threshold: 80,
  },
  // Artifacts: the source and destination parse first, then fetches over loopback HTTP.
  'actors-artifacts': {
    mutate: ['actors/artifacts/**/*.ts'],
    spec: [
      'spec/actors/artifacts/source.spec.ts',
      'spec/actors/artifacts/destination.spec.ts',
      'spec/actors/artifacts/stalled-lookup.spec.ts',
      'spec/actors/artifacts/concurrent-artifacts.spec.ts',
      'spec/actors/artifacts/hostile-artifacts.spec.ts',
      'spec/actors/artifacts/compressed-artifacts.spec.ts',
      'spec/actors/artifacts/artifact-user.spec.ts',
    ],
    threshold: 80,
  },
  // Services and checks: HTTP checks over loopback first, then service jobs on real processes.
  // Not exec-into-task.spec.ts: its script checks run in a chroot (seconds a test).
  'actors-services': {
    mutate: ['actors/services/**/*.ts'],
    spec: [
      'spec/actors/services/http-checks.spec.ts',
      'spec/actors/services/group-services.spec.ts',
      'spec/actors/services/group-check-restart.spec.ts',
      'spec/actors/services/service-job.spec.ts',
      'spec/actors/services/health-redeploy.spec.ts',
    ],
    threshold: 80,
  },
  // The alloc runner: its API and task waits, then a client's lifecycle (mock driver).
  'actors-runner': {
    mutate: ['actors/runner/**/*.ts'],
    spec: [
      'spec/actors/runner/runner-api.spec.ts',
      'spec/actors/runner/wait-for-tasks.spec.ts',
      'spec/actors/client/lifecycle.spec.ts',
      'spec/actors/client/stop-path.spec.ts',
      'spec/actors/client/terminal-alloc.spec.ts',
      'spec/actors/client/update-queue.spec.ts',
      'spec/actors/client/destroy.spec.ts',
    ],
    threshold: 80,
  },
  // The client: host actors and stats first, then allocs on the mock driver, then restores.
  'actors-client': {
    mutate: ['actors/client/**/*.ts', '!actors/client/types.ts'],
    spec: [
      'spec/actors/client/host-actors.spec.ts',
      'spec/actors/client/stats-publisher.spec.ts',
      'spec/actors/client/mock-driver.spec.ts',
      'spec/actors/client/lifecycle.spec.ts',
      'spec/actors/client/group.spec.ts',
      'spec/actors/client/terminal-alloc.spec.ts',
      'spec/actors/client/destroy.spec.ts',
      'spec/actors/client/unsupported.spec.ts',
      'spec/actors/client/hostile-alloc.spec.ts',
    ],
    threshold: 80,
  },
  // The drivers: env, signals, the mock driver and image refs first, then raw_exec and exec on real
  // processes (root). Not host-crash.spec.ts or supervisor*.spec.ts: they kill and restart hosts
  // (seconds a test).
  'actors-drivers': {
    mutate: ['actors/drivers/**/*.ts', '!actors/drivers/index.ts'],
    spec: [
      'spec/actors/drivers/env.spec.ts',
      'spec/actors/drivers/host-env.spec.ts',
      'spec/actors/drivers/port-env.spec.ts',
      'spec/actors/drivers/docker/image-refs.spec.ts',
      'spec/actors/drivers/mock.spec.ts',
      'spec/actors/drivers/mock-host.spec.ts',
      'spec/actors/drivers/rotator.spec.ts',
      'spec/actors/drivers/raw-exec.spec.ts',
      'spec/actors/drivers/exec.spec.ts',
      'spec/actors/drivers/docker.spec.ts',
    ],
    threshold: 80,
  },
};

/**
 * CI's fixed small subset (a few minutes on 2 cores): pure policies the chart specs prove, the
 * alloc-dir escape checks, and one file of each newer group: the agent's request-target parse,
 * `berth run`'s exit code, the scheduler's alloc name index, the server state's job status, a
 * refused alloc, auto_revert's target, port ranges, the enforce-index refusals, the GC's options
 * and the job file locator (a berth path's line in the HCL).
 */
export const CI_SUBSET = {
  mutate: [
    'machines/policy/kill-order.ts',
    'machines/policy/update-queue.ts',
    'machines/policy/shutdown-delay.ts',
    'actors/allocdir/escape.ts',
    'agent/http/target.ts',
    'bin/cli/run/outcome.ts',
    'agent/scheduler/names.ts',
    'agent/state/job-status.ts',
    'agent/broker/refused.ts',
    'agent/deploy/rollback.ts',
    'agent/config/port-ranges.ts',
    'agent/jobs/enforce-index.ts',
    'actors/gc/options.ts',
    'agent/jobspec/locate.ts',
  ],
  spec: [
    'spec/machines/policy/**/*.spec.ts',
    'spec/machines/alloc-stop-path.spec.ts',
    'spec/machines/task-shutdown-delay.spec.ts',
    'spec/actors/allocdir/escape.spec.ts',
    'spec/agent/http/target.spec.ts',
    'spec/agent/http-edge.spec.ts',
    'spec/bin/outcome.spec.ts',
    'spec/agent/scheduler/names.spec.ts',
    'spec/agent/state/job-status.spec.ts',
    'spec/agent/broker/refused.spec.ts',
    'spec/agent/deploy/rollback.spec.ts',
    'spec/agent/config/ports.spec.ts',
    'spec/agent/jobs/enforce-index.spec.ts',
    'spec/actors/gc/options.spec.ts',
    'spec/agent/jobspec/locate.spec.ts',
  ],
  threshold: 80,
};
