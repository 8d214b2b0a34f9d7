/**
 * Simulated alloc dirs: the far side of the {@link AllocDirHandle} boundary, in memory. Every
 * step takes random virtual time on the host's clock; the shared {@link SimDisk} says which dirs
 * exist, so the checker can see a dir that outlives its alloc's destroy or comes back after it.
 * @module
 */
import type { AllocDirHandle, TaskDirHandle } from '../actors/allocdir/handle.ts';
import { AllocDirNotBuiltError } from '../model/errors.ts';
import { AllocDirMoveError, TaskDirBuildError } from '../actors/allocdir/errors.ts';
import { BerthError } from '../model/errors.ts';
import { aliasOf } from './ops.ts';
import type { Rng } from './random.ts';
import type { Scheduler } from './scheduler.ts';
import type { Trace } from './trace.ts';

/** Which alloc dirs exist on the simulated disk, with their task dirs. */
export class SimDisk {
  readonly dirs = new Map<string, Set<string>>();
  /** Called whenever something is created in an alloc's dir. */
  onCreate?: (allocId: string, what: string) => void;

  create(allocId: string, what: string) {
    if (!this.dirs.has(allocId)) this.dirs.set(allocId, new Set());
    this.dirs.get(allocId)!.add(what);
    this.onCreate?.(allocId, what);
  }
}

/** What a simulated dir needs from its host. */
export interface SimDirEnv {
  sched: Scheduler;
  rng: Rng;
  trace: Trace;
  disk: SimDisk;
  owner: string;
  /** Chance that building an alloc dir fails, and that a move of sticky data fails. */
  buildFail: number;
  moveFail: number;
}

const delay = (env: SimDirEnv, r: Rng, lo: number, hi: number) => new Promise<void>((res) => env.sched.at(r.int(lo, hi), res, env.owner));

class SimTaskDir implements TaskDirHandle {
  readonly dir: string;
  readonly localDir: string;
  readonly secretsDir: string;
  readonly privateDir: string;
  readonly tmpDir: string;
  #n = 0;
  constructor(
    private readonly owner: SimAllocDir,
    readonly name: string,
    private readonly env: SimDirEnv,
  ) {
    this.dir = `${owner.dir}/${name}`;
    this.localDir = `${this.dir}/local`;
    this.secretsDir = `${this.dir}/secrets`;
    this.privateDir = `${this.dir}/private`;
    this.tmpDir = `${this.dir}/tmp`;
  }
  async build(): Promise<void> {
    await delay(this.env, this.env.rng.fork(`${this.env.owner}:taskdir:${this.owner.allocId}/${this.name}:${this.#n++}`), 0, 40);
    if (!this.owner.built) throw new TaskDirBuildError(`alloc dir ${this.owner.dir} is not built`);
    this.env.disk.create(this.owner.allocId, this.name);
  }
}

/** One simulated alloc dir. */
export class SimAllocDir implements AllocDirHandle {
  readonly dir: string;
  readonly sharedDir: string;
  readonly logsDir: string;
  readonly dataDir: string;
  #built = false;
  #building?: Promise<void>;
  #tasks = new Map<string, SimTaskDir>();
  #n = 0;

  constructor(
    root: string,
    readonly allocId: string,
    private readonly env: SimDirEnv,
  ) {
    this.dir = `${root}/${allocId}`;
    this.sharedDir = `${this.dir}/alloc`;
    this.logsDir = `${this.sharedDir}/logs`;
    this.dataDir = `${this.sharedDir}/data`;
  }

  #rng() {
    return this.env.rng.fork(`${this.env.owner}:allocdir:${this.allocId}:${this.#n++}`);
  }

  get built() {
    return this.#built;
  }

  build(): Promise<void> {
    this.#building ??= (async () => {
      const r = this.#rng();
      await delay(this.env, r, 1, 50);
      if (r.chance(this.env.buildFail)) {
        this.#building = undefined;
        throw new BerthError(`sim: failed to make ${this.allocId}: no space left on device`);
      }
      this.env.disk.create(this.allocId, 'alloc');
      this.#built = true;
    })();
    return this.#building;
  }

  async destroy(): Promise<void> {
    await delay(this.env, this.#rng(), 1, 50);
    this.#built = false;
    this.#building = undefined;
    this.env.disk.dirs.delete(this.allocId);
    this.env.trace.log(`disk rm ${aliasOf(this.allocId)}`);
  }

  newTaskDir(name: string): TaskDirHandle {
    let t = this.#tasks.get(name);
    if (!t) this.#tasks.set(name, (t = new SimTaskDir(this, name, this.env)));
    return t;
  }

  taskDir(name: string): TaskDirHandle | undefined {
    return this.#tasks.get(name);
  }

  async move(): Promise<void> {
    if (!this.#built) throw new AllocDirNotBuiltError(this.dir);
    const r = this.#rng();
    await delay(this.env, r, 1, 30);
    if (r.chance(this.env.moveFail)) throw new AllocDirMoveError('sim: error moving data dir: cross-device link');
  }

  async snapshot(out: NodeJS.WritableStream): Promise<void> {
    out.end();
  }
}
