/**
 * A host that dies (SIGKILL, by its own hand) while a task's cgroup is being made: after the
 * cgroup's record is written and its first directory made, before the rest. The crash spec then
 * restores the start in another process. Usage: node --import tsx die-making-cgroup.ts <configJson>
 */
import fs from 'node:fs';
import { detectCgroups } from '../../../../actors/cgroups/detect.ts';
import { createCgroupManager, type CgroupManager } from '../../../../actors/cgroups/manager.ts';
import { createRawExecDriver } from '../../../../actors/drivers/raw-exec.ts';
import type { TaskConfig } from '../../../../actors/drivers/driver.ts';

const config = JSON.parse(process.argv[2]!) as TaskConfig;
const detected = detectCgroups();
if (!detected.ok) throw new Error(`no cgroups: ${detected.reason}`);
const real = createCgroupManager(detected.layout);
const dying: CgroupManager = {
  ...real,
  create: (input, record) =>
    real.create(input, (cg) => {
      record?.(cg);
      fs.mkdirSync(Object.values(cg.paths)[0]!, { recursive: true });
      process.kill(process.pid, 'SIGKILL');
    }),
};
await createRawExecDriver({ cgroups: dying }).start(config, new AbortController().signal);
