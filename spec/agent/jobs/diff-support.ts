/** A small API job in the canonical shape the agent stores, and helpers to edit it and read its diff. */
import type { JobDiff, ObjectDiff, TaskDiff, TaskGroupDiff } from '../../../agent/jobs/diff/index.ts';

export type Obj = Record<string, any>;

/** A small job in the canonical API shape the agent stores. */
export function base(): Obj {
  return {
    ID: 'example',
    Name: 'example',
    Namespace: 'default',
    Region: 'global',
    Type: 'service',
    Priority: 50,
    Stop: false,
    AllAtOnce: false,
    ParentID: '',
    Datacenters: ['dc1'],
    Meta: { owner: 'ops' },
    Version: 0,
    Status: 'pending',
    SubmitTime: 1,
    CreateIndex: 2,
    ModifyIndex: 2,
    JobModifyIndex: 2,
    TaskGroups: [
      {
        Name: 'web',
        Count: 1,
        RestartPolicy: { Attempts: 2, Interval: 1800000000000, Delay: 15000000000, Mode: 'fail', RenderTemplates: false },
        Update: {
          Stagger: 30000000000,
          MaxParallel: 1,
          HealthCheck: 'checks',
          MinHealthyTime: 10000000000,
          HealthyDeadline: 300000000000,
          ProgressDeadline: 600000000000,
          AutoRevert: false,
          AutoPromote: false,
          Canary: 0,
        },
        Networks: [{ DynamicPorts: [{ Label: 'http', To: 8080, Value: 0, HostNetwork: 'default' }], ReservedPorts: null }],
        Services: [{ Name: 'web', PortLabel: 'http', Provider: 'nomad', Tags: ['a', 'b'] }],
        Tasks: [
          {
            Name: 'server',
            Driver: 'raw_exec',
            Config: { command: '/bin/sleep', args: ['100'] },
            Env: { A: '1' },
            KillTimeout: 5000000000,
            Resources: { CPU: 100, MemoryMB: 64 },
          },
        ],
      },
    ],
  };
}

export const edit = (f: (j: Obj) => void): Obj => {
  const j = base();
  f(j);
  return j;
};
export const web = (j: Obj) => j.TaskGroups[0];
export const server = (j: Obj) => j.TaskGroups[0].Tasks[0];
export const group = (d: JobDiff, name = 'web'): TaskGroupDiff => d.TaskGroups!.find((g) => g.Name === name)!;
export const task = (d: JobDiff, name = 'server'): TaskDiff => group(d).Tasks!.find((t) => t.Name === name)!;
export const f = (Type: string, Name: string, Old: string, New: string) => ({ Type, Name, Old, New, Annotations: null });
export const names = (objects: ObjectDiff[] | null) => (objects ?? []).map((o) => `${o.Type} ${o.Name}`);
