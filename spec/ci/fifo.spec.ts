/**
 * `writeFifo`, how a spec writes to a FIFO a task reads: it waits for the reader without blocking
 * the runner's main thread, and gives up with a named error within its bound when none comes.
 */
import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FifoNoReaderError, writeFifo } from '../support/fifo.ts';

describe('writeFifo: a FIFO a task reads', () => {
  let dir: string;
  let fifo: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-fifo-'));
    fifo = join(dir, 'in');
    execFileSync('mkfifo', [fifo]);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes to a FIFO whose reader (a process) opens it only after the write began', async () => {
    const written = writeFifo(fifo, 'hello fifo\n'); // its first open is tried now, with no reader
    const cat = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    let got = '';
    cat.stdout.on('data', (d: Buffer) => (got += d.toString()));
    const exited = new Promise((r) => cat.on('close', r));
    await written;
    expect(await exited).to.equal(0); // the write end closed: cat saw end of file
    expect(got).to.equal('hello fifo\n');
  });

  it('with no reader ever, rejects with FifoNoReaderError within its bound, and the main thread runs meanwhile', async () => {
    let turns = 0;
    const ticker = setInterval(() => turns++, 5);
    const start = Date.now();
    try {
      const err = await writeFifo(fifo, 'x', 200).catch((e: Error) => e);
      expect(err).to.be.instanceOf(FifoNoReaderError);
      expect((err as Error).message).to.equal(`no reader opened ${fifo} within 200 ms`);
    } finally {
      clearInterval(ticker);
    }
    const took = Date.now() - start;
    expect(took).to.be.within(200, 2000);
    // A blocking open (writeFileSync) would have held the loop: no timer could have fired.
    expect(turns).to.be.greaterThan(5);
  });

  it('passes on another open error as it is (no such FIFO: ENOENT), at once', async () => {
    const err = await writeFifo(join(dir, 'missing'), 'x', 5000).catch((e: NodeJS.ErrnoException) => e);
    expect(err).not.to.be.instanceOf(FifoNoReaderError);
    expect((err as NodeJS.ErrnoException).code).to.equal('ENOENT');
  });
});
