/**
 * Nomad's jobspec stanzas, as tables: each HCL attribute or block of each stanza and the API field
 * it becomes (the names of Nomad's `api` package, which `nomad job run -output` prints), how its
 * value decodes, and the stanzas berth refuses by name. Written from Nomad's jobspec documentation
 * and the `hcl` tags of its API structs.
 * @module
 */

/** How an HCL value decodes. */
export type Decode =
  | 'string'
  | 'int'
  | 'bool'
  | 'duration' // "30s" -> nanoseconds
  | 'strings' // list of strings
  | 'map' // map of strings (block or attribute)
  | 'listmap' // map of lists of strings (check header)
  | 'any' // kept as given (driver config)
  | { block: string } // one block of this type
  | { blocks: string } // repeated blocks
  | { labelled: string; label: string }; // repeated blocks with a label that becomes field `label`

/** One stanza: field name -> [API name, decoding]. */
export interface BlockSpec {
  fields: Record<string, [api: string, decode: Decode]>;
  /** HCL names refused by name, with the berth (camelCase) key the refusal path ends in. */
  unsupported?: Record<string, string>;
  /** HCL names that must be set (an `hcl` tag without `,optional` on Nomad's API struct). */
  required?: string[];
  /** Accepted and passed through to the API job, but with no effect on a node (documented). */
  ignored?: Record<string, [api: string, decode: Decode]>;
}

/** The fields `update` and `migrate` share, meaning the same in both (Nomad's `UpdateStrategy` and `MigrateStrategy`). */
const ROLLOUT_FIELDS: BlockSpec['fields'] = {
  max_parallel: ['MaxParallel', 'int'],
  health_check: ['HealthCheck', 'string'],
  min_healthy_time: ['MinHealthyTime', 'duration'],
  healthy_deadline: ['HealthyDeadline', 'duration'],
};

/** Every stanza berth reads, by HCL block name. */
export const BLOCKS: Record<string, BlockSpec> = {
  job: {
    fields: {
      name: ['Name', 'string'],
      id: ['ID', 'string'],
      region: ['Region', 'string'],
      namespace: ['Namespace', 'string'],
      type: ['Type', 'string'],
      priority: ['Priority', 'int'],
      datacenters: ['Datacenters', 'strings'],
      meta: ['Meta', 'map'],
      group: ['TaskGroups', { labelled: 'group', label: 'Name' }],
      // A task with no group: a group of its own (alone-tasks.ts), as jobspec2 makes it.
      task: ['Tasks', { labelled: 'task', label: 'Name' }],
      update: ['Update', { block: 'update' }],
      reschedule: ['Reschedule', { block: 'reschedule' }],
      migrate: ['Migrate', { block: 'migrate' }],
      constraint: ['Constraints', { blocks: 'constraint' }],
      affinity: ['Affinities', { blocks: 'affinity' }],
      spread: ['Spreads', { blocks: 'spread' }],
      parameterized: ['ParameterizedJob', { block: 'parameterized' }],
      periodic: ['Periodic', { block: 'periodic' }],
    },
    ignored: { all_at_once: ['AllAtOnce', 'bool'], node_pool: ['NodePool', 'string'], ui: ['UI', { block: 'ui' }] },
    unsupported: {
      multiregion: 'multiregion',
      vault: 'vault',
      vault_token: 'vaultToken',
      consul_token: 'consulToken',
    },
  },
  // Nomad's JobUIConfig: what its web UI shows of the job (kept in the job, no effect on a node).
  ui: { fields: { description: ['Description', 'string'], link: ['Links', { blocks: 'ui_link' }] } },
  ui_link: { fields: { label: ['Label', 'string'], url: ['URL', 'string'] } },
  group: {
    fields: {
      count: ['Count', 'int'],
      task: ['Tasks', { labelled: 'task', label: 'Name' }],
      restart: ['RestartPolicy', { block: 'restart' }],
      reschedule: ['ReschedulePolicy', { block: 'reschedule' }],
      ephemeral_disk: ['EphemeralDisk', { block: 'ephemeral_disk' }],
      update: ['Update', { block: 'update' }],
      migrate: ['Migrate', { block: 'migrate' }],
      network: ['Networks', { blocks: 'network' }],
      service: ['Services', { blocks: 'service' }],
      meta: ['Meta', 'map'],
      shutdown_delay: ['ShutdownDelay', 'duration'],
      max_run_duration: ['MaxRunDuration', 'duration'],
      max_client_disconnect: ['MaxClientDisconnect', 'duration'],
      stop_after_client_disconnect: ['StopAfterClientDisconnect', 'duration'],
      disconnect: ['Disconnect', { block: 'disconnect' }],
      constraint: ['Constraints', { blocks: 'constraint' }],
      affinity: ['Affinities', { blocks: 'affinity' }],
      spread: ['Spreads', { blocks: 'spread' }],
    },
    ignored: { prevent_reschedule_on_lost: ['PreventRescheduleOnLost', 'bool'] },
    unsupported: {
      volume: 'volumes',
      scaling: 'scaling',
      consul: 'consul',
      vault: 'vault',
    },
  },
  task: {
    fields: {
      driver: ['Driver', 'string'],
      user: ['User', 'string'],
      config: ['Config', 'any'],
      env: ['Env', 'map'],
      meta: ['Meta', 'map'],
      resources: ['Resources', { block: 'resources' }],
      restart: ['RestartPolicy', { block: 'restart' }],
      kill_timeout: ['KillTimeout', 'duration'],
      kill_signal: ['KillSignal', 'string'],
      leader: ['Leader', 'bool'],
      shutdown_delay: ['ShutdownDelay', 'duration'],
      logs: ['LogConfig', { block: 'logs' }],
      lifecycle: ['Lifecycle', { block: 'lifecycle' }],
      artifact: ['Artifacts', { blocks: 'artifact' }],
      service: ['Services', { blocks: 'service' }],
      constraint: ['Constraints', { blocks: 'constraint' }],
      affinity: ['Affinities', { blocks: 'affinity' }],
      dispatch_payload: ['DispatchPayload', { block: 'dispatch_payload' }],
      template: ['Templates', { blocks: 'template' }],
    },
    ignored: { kind: ['Kind', 'string'] },
    unsupported: {
      vault: 'vault',
      consul: 'consul',
      volume_mount: 'volumeMounts',
      csi_plugin: 'csiPluginConfig',
      scaling: 'scalingPolicies',
      identity: 'identities',
      secret: 'secrets',
      action: 'actions',
      schedule: 'schedule',
    },
  },
  // jobspec2's constraint and affinity: `attribute`/`operator`/`value`, or one shorthand key
  // (`version = ">= 1.2"`, `distinct_hosts = true`, ...) that sets the operator; see decode.ts.
  constraint: {
    fields: {
      attribute: ['LTarget', 'string'],
      operator: ['Operand', 'string'],
      value: ['RTarget', 'string'],
      version: ['version', 'string'],
      semver: ['semver', 'string'],
      regexp: ['regexp', 'string'],
      set_contains: ['set_contains', 'string'],
      distinct_hosts: ['distinct_hosts', 'bool'],
      distinct_property: ['distinct_property', 'string'],
    },
  },
  affinity: {
    fields: {
      attribute: ['LTarget', 'string'],
      operator: ['Operand', 'string'],
      value: ['RTarget', 'string'],
      weight: ['Weight', 'int'],
      version: ['version', 'string'],
      semver: ['semver', 'string'],
      regexp: ['regexp', 'string'],
      set_contains: ['set_contains', 'string'],
      set_contains_all: ['set_contains_all', 'string'],
      set_contains_any: ['set_contains_any', 'string'],
    },
  },
  spread: {
    fields: { attribute: ['Attribute', 'string'], weight: ['Weight', 'int'], target: ['SpreadTarget', { labelled: 'target', label: 'Value' }] },
  },
  target: { fields: { percent: ['Percent', 'int'] } },
  resources: {
    fields: {
      cpu: ['CPU', 'int'],
      cores: ['Cores', 'int'],
      memory: ['MemoryMB', 'int'],
      memory_max: ['MemoryMaxMB', 'int'],
      disk: ['DiskMB', 'int'],
      secrets: ['SecretsMB', 'int'],
      // The task-level network of Nomad before 0.12, still honoured by its scheduler: berth
      // allocates its ports with the group's (see model/schema/nomad.ts).
      network: ['Networks', { blocks: 'network' }],
    },
    unsupported: { device: 'devices', numa: 'numa' },
  },
  restart: {
    fields: {
      attempts: ['Attempts', 'int'],
      interval: ['Interval', 'duration'],
      delay: ['Delay', 'duration'],
      mode: ['Mode', 'string'],
      render_templates: ['RenderTemplates', 'bool'],
    },
  },
  reschedule: {
    fields: {
      attempts: ['Attempts', 'int'],
      interval: ['Interval', 'duration'],
      delay: ['Delay', 'duration'],
      delay_function: ['DelayFunction', 'string'],
      max_delay: ['MaxDelay', 'duration'],
      unlimited: ['Unlimited', 'bool'],
    },
  },
  ephemeral_disk: { fields: { sticky: ['Sticky', 'bool'], migrate: ['Migrate', 'bool'], size: ['SizeMB', 'int'] } },
  update: {
    fields: {
      stagger: ['Stagger', 'duration'],
      ...ROLLOUT_FIELDS,
      progress_deadline: ['ProgressDeadline', 'duration'],
      canary: ['Canary', 'int'],
      auto_revert: ['AutoRevert', 'bool'],
      auto_promote: ['AutoPromote', 'bool'],
    },
  },
  migrate: { fields: ROLLOUT_FIELDS },
  disconnect: {
    fields: {
      lost_after: ['LostAfter', 'duration'],
      stop_on_client_after: ['StopOnClientAfter', 'duration'],
      replace: ['Replace', 'bool'],
      reconcile: ['Reconcile', 'string'],
    },
  },
  network: {
    fields: { mode: ['Mode', 'string'], port: ['DynamicPorts', { labelled: 'port', label: 'Label' }] },
    ignored: { hostname: ['Hostname', 'string'], mbits: ['MBits', 'int'] },
    unsupported: { dns: 'dns', cni: 'cni' },
  },
  port: {
    fields: { static: ['Value', 'int'], to: ['To', 'int'], host_network: ['HostNetwork', 'string'] },
    unsupported: { ignore_collision: 'ignoreCollision' },
  },
  service: {
    fields: {
      name: ['Name', 'string'],
      port: ['PortLabel', 'string'],
      tags: ['Tags', 'strings'],
      meta: ['Meta', 'map'],
      address_mode: ['AddressMode', 'string'],
      address: ['Address', 'string'],
      provider: ['Provider', 'string'],
      task: ['TaskName', 'string'],
      check: ['Checks', { blocks: 'check' }],
      check_restart: ['CheckRestart', { block: 'check_restart' }],
    },
    ignored: { on_update: ['OnUpdate', 'string'], enable_tag_override: ['EnableTagOverride', 'bool'] },
    unsupported: {
      connect: 'connect',
      canary_tags: 'canaryTags',
      canary_meta: 'canaryMeta',
      tagged_addresses: 'taggedAddresses',
      identity: 'identity',
      weights: 'weights',
    },
  },
  check: {
    fields: {
      name: ['Name', 'string'],
      type: ['Type', 'string'],
      command: ['Command', 'string'],
      args: ['Args', 'strings'],
      path: ['Path', 'string'],
      protocol: ['Protocol', 'string'],
      port: ['PortLabel', 'string'],
      interval: ['Interval', 'duration'],
      timeout: ['Timeout', 'duration'],
      initial_status: ['InitialStatus', 'string'],
      method: ['Method', 'string'],
      header: ['Header', 'listmap'],
      check_restart: ['CheckRestart', { block: 'check_restart' }],
      task: ['TaskName', 'string'],
      success_before_passing: ['SuccessBeforePassing', 'int'],
      failures_before_critical: ['FailuresBeforeCritical', 'int'],
    },
    ignored: {
      address_mode: ['AddressMode', 'string'],
      on_update: ['OnUpdate', 'string'],
      notes: ['Notes', 'string'],
      failures_before_warning: ['FailuresBeforeWarning', 'int'],
    },
    unsupported: {
      expose: 'expose',
      body: 'body',
      tls_skip_verify: 'tlsSkipVerify',
      tls_server_name: 'tlsServerName',
      grpc_service: 'grpcService',
      grpc_use_tls: 'grpcUseTls',
    },
  },
  check_restart: { fields: { limit: ['Limit', 'int'], grace: ['Grace', 'duration'], ignore_warnings: ['IgnoreWarnings', 'bool'] } },
  logs: {
    fields: { max_files: ['MaxFiles', 'int'], max_file_size: ['MaxFileSizeMB', 'int'] },
    ignored: { enabled: ['Enabled', 'bool'] },
    unsupported: { disabled: 'disabled' },
  },
  lifecycle: { fields: { hook: ['Hook', 'string'], sidecar: ['Sidecar', 'bool'] } },
  parameterized: { fields: { payload: ['Payload', 'string'], meta_required: ['MetaRequired', 'strings'], meta_optional: ['MetaOptional', 'strings'] } },
  dispatch_payload: { fields: { file: ['File', 'string'] } },
  template: {
    fields: {
      data: ['EmbeddedTmpl', 'string'],
      source: ['SourcePath', 'string'],
      destination: ['DestPath', 'string'],
      change_mode: ['ChangeMode', 'string'],
      change_signal: ['ChangeSignal', 'string'],
      splay: ['Splay', 'duration'],
      perms: ['Perms', 'string'],
      env: ['Envvars', 'bool'],
      left_delimiter: ['LeftDelim', 'string'],
      right_delimiter: ['RightDelim', 'string'],
      error_on_missing_key: ['ErrMissingKey', 'bool'],
      once: ['Once', 'bool'],
      uid: ['Uid', 'int'],
      gid: ['Gid', 'int'],
      change_script: ['ChangeScript', { block: 'change_script' }],
      wait: ['Wait', { block: 'template_wait' }],
    },
    ignored: { vault_grace: ['VaultGrace', 'duration'] },
  },
  change_script: {
    fields: { command: ['Command', 'string'], args: ['Args', 'strings'], timeout: ['Timeout', 'duration'], fail_on_error: ['FailOnError', 'bool'] },
    // Nomad's ChangeScript tags both without `,optional`: jobspec2 refuses a change_script missing either.
    required: ['command', 'fail_on_error'],
  },
  template_wait: { fields: { min: ['Min', 'duration'], max: ['Max', 'duration'] } },
  periodic: {
    fields: {
      cron: ['Spec', 'string'],
      crons: ['Specs', 'strings'],
      prohibit_overlap: ['ProhibitOverlap', 'bool'],
      time_zone: ['TimeZone', 'string'],
      enabled: ['Enabled', 'bool'],
    },
  },
  artifact: {
    fields: {
      source: ['GetterSource', 'string'],
      destination: ['RelativeDest', 'string'],
      mode: ['GetterMode', 'string'],
      options: ['GetterOptions', 'map'],
      headers: ['GetterHeaders', 'map'],
    },
    unsupported: { insecure: 'insecure', chown: 'chown' },
  },
};
