/**
 * `berth alloc fs [-stat] ALLOC [PATH]`: a directory listing of the alloc dir, or a file's
 * content, through the agent's `/v1/client/fs/*`.
 * @module
 */
import { apiCommand } from '../nomad/api-command.ts';
import { writeLine } from '../io.ts';
import { table } from '../nomad/table.ts';

const HELP = `usage: berth alloc fs [-stat] [-json] ALLOC [PATH]

Lists PATH (default: the alloc dir's root) when it is a directory; prints the file otherwise.
  -stat  show the entry's details instead of its content
Exit codes: 0 shown; 1 no such allocation or path, or an error; 2 usage error.`;

type Obj = Record<string, unknown>;

/** `berth alloc fs`. */
export const allocFsCommand = apiCommand(
  {
    command: 'alloc fs',
    summary: "list or read files in an allocation's directory",
    help: HELP,
    args: [[1, 2], 'expects an allocation id and optionally a path'],
  },
  { stat: 'boolean', json: 'boolean', verbose: 'boolean' },
  async ({ flags, positionals, api, io }) => {
    const a = await api.resolveAlloc(positionals[0]!);
    const path = positionals[1] ?? '/';
    const q = `path=${encodeURIComponent(path)}`;
    const st = (await api.get<Obj>(`/v1/client/fs/stat/${a.ID}?${q}`)).body;
    const row = (e: Obj) => [e.FileMode, e.IsDir ? '<dir>' : `${e.Size} B`, e.ModTime, `${e.Name}${e.IsDir ? '/' : ''}`];
    if (flags.stat) {
      writeLine(io.stdout, flags.json ? JSON.stringify(st, null, 2) : table(['Mode', 'Size', 'Modified Time', 'Name'], [row(st)]));
      return 0;
    }
    if (st.IsDir) {
      const list = (await api.get<Obj[]>(`/v1/client/fs/ls/${a.ID}?${q}`)).body;
      writeLine(io.stdout, flags.json ? JSON.stringify(list, null, 2) : table(['Mode', 'Size', 'Modified Time', 'Name'], list.map(row)));
      return 0;
    }
    const res = await api.raw('GET', `/v1/client/fs/cat/${a.ID}?${q}`);
    for await (const chunk of res) io.stdout.write(chunk);
    return 0;
  },
);
