/**
 * Nomad's filesystem functions, relative to the job file's directory: file, filebase64,
 * fileexists, abspath, basename, dirname, pathexpand. Where Nomad disables them (`/v1/jobs/parse`
 * on a server: `AllowFS` false) they fail as Nomad's do: "filesystem function disabled".
 * @module
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { Value } from '../values.ts';
import { FunctionCallError, type FunctionTable, type HclFunction } from './call.ts';
import { define } from './define.ts';

const s = (v: Value) => v as string;

/** The largest file `file()` reads (the whole job is at most a few MB anyway). */
export const MAX_FILE_FUNCTION_BYTES = 4 * 1024 * 1024;

const expand = (p: string) => (p === '~' ? homedir() : p.startsWith('~/') ? join(homedir(), p.slice(2)) : p);

function read(basedir: string, path: string): Buffer {
  const full = resolve(basedir, expand(path));
  let size: number;
  try {
    const st = statSync(full);
    if (st.isDirectory()) throw new FunctionCallError(`failed to read ${path}: is a directory`);
    size = st.size;
  } catch (e) {
    if (e instanceof FunctionCallError) throw e;
    throw new FunctionCallError(
      `no file exists at ${path}; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource`,
    );
  }
  if (size > MAX_FILE_FUNCTION_BYTES) throw new FunctionCallError(`${path} is larger than ${MAX_FILE_FUNCTION_BYTES} bytes`);
  return readFileSync(full);
}

/** The filesystem functions for a job file in `basedir`; with `allowFs` false each fails as Nomad's guard does. */
export function filesystemFunctions(basedir: string, allowFs: boolean): FunctionTable {
  const table: FunctionTable = {
    file: define(['path:string'], ([p]) => {
      const buf = read(basedir, s(p));
      const text = buf.toString('utf8');
      if (!Buffer.from(text, 'utf8').equals(buf))
        throw new FunctionCallError(
          `contents of ${s(p)} are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead`,
        );
      return text;
    }),
    filebase64: define(['path:string'], ([p]) => read(basedir, s(p)).toString('base64')),
    fileexists: define(['path:string'], ([p]) => {
      const full = resolve(basedir, expand(s(p)));
      if (!existsSync(full)) return false;
      if (!statSync(full).isFile()) throw new FunctionCallError(`${s(p)} is not a regular file, but ${JSON.stringify('directory')}`);
      return true;
    }),
    abspath: define(['path:string'], ([p]) => resolve(s(p))),
    basename: define(['path:string'], ([p]) => basename(s(p))),
    dirname: define(['path:string'], ([p]) => dirname(s(p))),
    pathexpand: define(['path:string'], ([p]) => expand(s(p))),
  };
  if (allowFs) return table;
  const guarded = (f: HclFunction): HclFunction => ({
    ...f,
    impl: () => {
      throw new FunctionCallError('filesystem function disabled');
    },
  });
  return Object.fromEntries(Object.entries(table).map(([k, f]) => [k, guarded(f)]));
}
