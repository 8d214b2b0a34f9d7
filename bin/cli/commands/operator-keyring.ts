/**
 * `berth operator root keyring rotate [-full] [-verbose]` and `berth operator root keyring list
 * [-verbose]`: the agent's root keys, as `nomad operator root keyring` shows and rotates them.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
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

const ROTATE_HELP = `usage: berth operator root keyring rotate [-full] [-now] [-verbose]

Makes a new root key and seals every variable written from now on with it; the old keys stay,
inactive, so what they sealed stays readable. -full also seals every variable again with the new
key (at once: berth does it before it answers), after which the old key files may be removed.
-now is accepted for nomad's sake (berth never prepublishes a key).

Exit codes: 0 rotated; 1 an error (-full meeting a variable whose key is gone: nothing changed); 2 usage error.`;
const LIST_HELP = `usage: berth operator root keyring list [-verbose] [-json]

Lists the agent's root keys: id, state (active or inactive) and creation time.

Exit codes: 0 listed; 1 an error; 2 usage error.`;

const rotate = apiCommand(
  {
    command: 'operator root keyring rotate',
    summary: 'make a new root key the active one',
    help: ROTATE_HELP,
    args: [0, 'This command requires no arguments.'],
  },
  { full: 'boolean', now: 'boolean', verbose: 'boolean' },
  async ({ flags, api, io }) => {
    const { body } = await api.json<{ Key: ApiRootKeyMeta }>('PUT', `/v1/operator/keyring/rotate${flags.full ? '?full=true' : ''}`);
    writeLine(io.stdout, keysTable([body.Key], flags.verbose === true));
    return 0;
  },
);

const list = apiCommand(
  { command: 'operator root keyring list', summary: 'list the root keys', help: LIST_HELP, args: [0, 'This command requires no arguments.'] },
  { verbose: 'boolean', json: 'boolean' },
  async ({ flags, api, io }) => {
    const { body } = await api.get<ApiRootKeyMeta[]>('/v1/operator/keyring/keys');
    writeLine(io.stdout, flags.json ? JSON.stringify(body, null, 4) : keysTable(body, flags.verbose === true));
    return 0;
  },
);

/** `berth operator root`. */
export const operatorRootCommand = commandGroup('root', "the agent's root encryption keys", [
  commandGroup('keyring', 'the root keys that seal variables', [rotate, list]),
]);
