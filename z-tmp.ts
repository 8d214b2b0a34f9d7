import { readFileSync } from 'node:fs';
import { parseAllocation } from './model/parse.ts';
import { makeAlloc, mockTask } from './spec/support/fixtures.ts';
const show = (f: () => unknown) => { try { f(); console.log('ok'); } catch (e) { console.log((e as any).issues); } };
show(() => parseAllocation(makeAlloc([mockTask('t', undefined, { resources: { cpu: 0, memoryMB: 5, memoryMaxMB: 4, cores: -1 } })])));
const j = JSON.parse(readFileSync('spec/fixtures/nomad-alloc.json', 'utf8'));
j.ID = 'short'; j.Job.TaskGroups[0].Tasks[1].Name = 'a/b'; j.Job.TaskGroups[0].Tasks.push({ ...j.Job.TaskGroups[0].Tasks[0] }); j.AllocModifyIndex = -1; j.PreemptedAllocations = [''];
show(() => parseAllocation(j));
