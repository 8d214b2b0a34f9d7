/**
 * `berth operator root keyring rotate [-full] [-verbose]` and `berth operator root keyring list
 * [-verbose]`: the agent's root keys, as `nomad operator root keyring` shows and rotates them.
 * @module
 */
import { type Command } from '../command.ts';
import { apiCommandFlags } from '../nomad/api-command.ts';
import { writeLine } from '../io.ts';
import { commandGroup } from '../nomad/group.ts';
import { table } from '../nomad/table.ts';
import { isoTime } from '../var/common.ts';

/** Nomad's `RootKeyMeta`. */
interface ApiRootKeyMeta {
  KeyID: string;
  State: string;
  CreateTime: number;
}

/** nomad's key table: the key id (8 characters unless `verbose`), its state, when it was made. */
const keysTable = (keys: ApiRootKeyMeta[], verbose: boolean) =>
  table(
    ['Key', 'State', 'Create Time'],
    keys.map((k) => [verbose ? k.KeyID : k.KeyID.slice(0, 8), k.State, isoTime(k.CreateTime)]),
  );

const rotate: Command = {
  name: 'rotate',
  summary: 'make a new root key the active one',
  help: `usage: berth operator root keyring rotate [-full] [-now] [-verbose]

Makes a new root key and seals every variable written from now on with it; the old keys stay,
inactive, so what they sealed stays readable. -full also seals every variable again with the new
key (at once: berth does it before it answers), after which the old key files may be removed.
-now is accepted for nomad's sake (berth never prepublishes a key).

Exit codes: 0 rotated; 1 an error (-full meeting a variable whose key is gone: nothing changed); 2 usage error.`,
  async run(argv, io) {
    const { flags, exit, api } = apiCommandFlags(
      'operator root keyring rotate',
      argv,
      { full: 'boolean', now: 'boolean', verbose: 'boolean' },
      { io, help: this.help, positionals: 0, usage: 'This command requires no arguments.' },
    );
    if (exit !== undefined) return exit;
    const { body } = await api.json<{ Key: ApiRootKeyMeta }>('PUT', `/v1/operator/keyring/rotate${flags.full ? '?full=true' : ''}`);
    writeLine(io.stdout, keysTable([body.Key], flags.verbose === true));
    return 0;
  },
};

const list: Command = {
  name: 'list',
  summary: 'list the root keys',
  help: `usage: berth operator root keyring list [-verbose] [-json]

Lists the agent's root keys: id, state (active or inactive) and creation time.

Exit codes: 0 listed; 1 an error; 2 usage error.`,
  async run(argv, io) {
    const { flags, exit, api } = apiCommandFlags(
      'operator root keyring list',
      argv,
      { verbose: 'boolean', json: 'boolean' },
      { io, help: this.help, positionals: 0, usage: 'This command requires no arguments.' },
    );
    if (exit !== undefined) return exit;
    const { body } = await api.get<ApiRootKeyMeta[]>('/v1/operator/keyring/keys');
    writeLine(io.stdout, flags.json ? JSON.stringify(body, null, 4) : keysTable(body, flags.verbose === true));
    return 0;
  },
};

/** `berth operator root`. */
export const operatorRootCommand = commandGroup('root', "the agent's root encryption keys", [
  commandGroup('keyring', 'the root keys that seal variables', [rotate, list]),
]);
