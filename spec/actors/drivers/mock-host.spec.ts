import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../support/mock-await-host.ts', import.meta.url));

/** Runs the child script in `mode`; resolves with its exit code and output. */
function child(mode: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', SCRIPT, mode], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

describe('mock_driver: the host process lives while a mock task runs', function () {
  this.timeout(40_000);

  it('a script that awaits a mock-driver alloc at top level exits 0 with its task finished (not 13: unsettled await)', async () => {
    const r = await child('await');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('task dead failed=false finished=true');
  });

  it('client.shutdown() lets the host go while a mock task still runs (an hour-long run_for does not hold it)', async () => {
    const r = await child('shutdown');
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('shut down');
  });
});
