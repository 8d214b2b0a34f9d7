/**
 * The builders every CLI command is made with (bin/cli/nomad/nomad-command.ts, api-command.ts and
 * command.ts's flagCommand): the preamble they share, written once, does what each command's own
 * preamble did (help, flags, positional counts, usage errors naming the command).
 */
import { expect } from 'chai';
import { PassThrough, Readable } from 'node:stream';
import { flagCommand } from '../../bin/cli/command.ts';
import { UsageError } from '../../bin/cli/errors.ts';
import type { CliIO } from '../../bin/cli/io.ts';
import { apiCommand } from '../../bin/cli/nomad/api-command.ts';
import { NO_ARGS, nomadCommand } from '../../bin/cli/nomad/nomad-command.ts';

/** Streams that keep what the command wrote. */
function memoryIO(): CliIO & { out(): string } {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (c: Buffer) => (text += c.toString()));
  return { stdout, stderr: new PassThrough(), stdin: Readable.from(['']), color: false, out: () => text };
}

describe('CLI: the command builders', () => {
  const calls: unknown[] = [];
  const meta = {
    command: 'thing do',
    summary: 'does a thing',
    help: 'usage: berth thing do [-n N] ID',
    args: [[1, 2], 'expects an id and maybe a name'],
  } as const;
  const cmd = nomadCommand(meta, { n: 'string', all: 'boolean' }, async ({ flags, positionals }) => {
    calls.push({ flags, positionals });
    return 7;
  });
  beforeEach(() => (calls.length = 0));

  it('names the command by its last word and keeps its summary and help', () => {
    expect(cmd).to.include({ name: 'do', summary: 'does a thing', help: meta.help });
  });

  it('runs the command with its flags and positionals, and returns its exit code', async () => {
    expect(await cmd.run(['-n', '3', 'abc', '-all'], memoryIO())).to.equal(7);
    expect(calls).to.deep.equal([{ flags: { n: '3', all: true }, positionals: ['abc'] }]);
  });

  it('answers -help with the help text and exit 0, without running the command', async () => {
    const io = memoryIO();
    expect(await cmd.run(['abc', '-help'], io)).to.equal(0);
    expect(io.out()).to.equal(`${meta.help}\n`);
    expect(calls).to.deep.equal([]);
  });

  it('refuses a positional count outside its range, and an unknown flag, as usage errors naming the command', async () => {
    for (const argv of [[], ['a', 'b', 'c']]) {
      const err = await cmd.run(argv, memoryIO()).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(UsageError).and.include({ message: 'expects an id and maybe a name', command: 'thing do' });
    }
    const err = await cmd.run(['-x', 'a'], memoryIO()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UsageError).and.include({ message: "unknown flag '-x'", command: 'thing do' });
    expect(calls).to.deep.equal([]);
  });

  it('NO_ARGS names the first argument given', async () => {
    const none = nomadCommand({ command: 'thing none', summary: '', help: '', args: NO_ARGS }, {}, async () => 0);
    const err = await none.run(['extra', 'more'], memoryIO()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UsageError).and.include({ message: 'unexpected argument "extra"', command: 'thing none' });
  });

  it("apiCommand adds nomad's agent flags and hands the command the agent's API they name", async () => {
    let addr = '';
    const api = apiCommand({ command: 'thing api', summary: '', help: '' }, {}, async ({ api }) => ((addr = api.addr), 0));
    expect(await api.run(['-address', 'http://127.0.0.1:9'], memoryIO())).to.equal(0);
    expect(addr).to.equal('http://127.0.0.1:9');
  });

  it('flagCommand parses GNU-style flags, answers --help, and names itself in its usage errors', async () => {
    const seen: unknown[] = [];
    const gnu = flagCommand(
      { name: 'gnu', summary: '', help: 'usage: berth gnu' },
      { quiet: { type: 'boolean', short: 'q' } },
      async ({ values, positionals }) => {
        seen.push({ quiet: values.quiet, positionals });
        return 0;
      },
    );
    await gnu.run(['-q', 'x'], memoryIO());
    expect(seen).to.deep.equal([{ quiet: true, positionals: ['x'] }]);
    const io = memoryIO();
    expect(await gnu.run(['--help'], io)).to.equal(0);
    expect(io.out()).to.equal('usage: berth gnu\n');
    const err = await gnu.run(['--nope'], memoryIO()).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UsageError).and.include({ message: "unknown flag '--nope'", command: 'gnu' });
  });
});
