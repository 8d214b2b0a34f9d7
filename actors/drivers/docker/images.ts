/**
 * The docker driver's images: getting one (a `load` tarball from the task dir, else a pull, with
 * its progress told and a stall bounded by `pull_activity_timeout`), and Nomad's image GC: a
 * reference count per image across tasks, the image removed `image_delay` after its last user.
 * @module
 */
import fs from 'node:fs';
import path from 'node:path';
import type Dockerode from 'dockerode';
import { BerthError, DriverStartError } from '../../../model/errors.ts';
import { errorText } from '../../../model/error-text.ts';
import type { Clock } from '../../../model/clock.ts';
import { parseGoDuration } from '../../../model/duration.ts';
import type { DockerTaskConfigInput } from '../../../model/schema/docker-config.ts';
import type { TaskConfig } from '../driver.ts';
import { imageRef, one } from './container-spec.ts';

/** A pull that failed or stalled. */
export class ImagePullError extends BerthError {}

/** What the driver tells while it gets an image (becomes a "Driver" task event). */
export type ImageEvent = (message: string, details?: Record<string, string>) => void;

interface PullProgress {
  id?: string;
  status?: string;
  progressDetail?: { current?: number; total?: number };
  error?: string;
}

/** `registry/repo:tag` → `{ repo, tag }` for the Engine's create-image call. */
function splitRef(ref: string): { repo: string; tag: string } {
  const at = ref.lastIndexOf(':');
  const slash = ref.lastIndexOf('/');
  return at > slash ? { repo: ref.slice(0, at), tag: ref.slice(at + 1) } : { repo: ref, tag: 'latest' };
}

/** One line of pull progress, as Nomad's docker driver words it. */
function progressLine(layers: Map<string, PullProgress>): string {
  let done = 0;
  let current = 0;
  let total = 0;
  for (const p of layers.values()) {
    if (/complete|already exists/i.test(p.status ?? '')) done++;
    current += p.progressDetail?.current ?? 0;
    total += p.progressDetail?.total ?? 0;
  }
  const mb = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
  return `Pulled ${done}/${layers.size} (${mb(current)}/${mb(total)}) layers`;
}

/**
 * Pulls `ref`: fails when the Engine reports nothing for `activityMs` (Nomad's
 * pull_activity_timeout) or the whole pull passes `timeoutMs` (image_pull_timeout).
 */
export async function pullImage(
  docker: Dockerode,
  ref: string,
  opts: { auth?: Record<string, string>; activityMs: number; timeoutMs: number; emit: ImageEvent; signal: AbortSignal; progressEveryMs?: number },
): Promise<void> {
  const { repo, tag } = splitRef(ref);
  const ac = new AbortController();
  const onAbort = () => ac.abort(opts.signal.reason);
  opts.signal.addEventListener('abort', onAbort, { once: true });
  let stream: NodeJS.ReadableStream;
  try {
    stream = (await docker.createImage({
      fromImage: repo,
      tag,
      abortSignal: ac.signal,
      ...(opts.auth ? { authconfig: opts.auth } : {}),
    } as never)) as NodeJS.ReadableStream;
  } catch (e) {
    opts.signal.removeEventListener('abort', onAbort);
    throw new ImagePullError(`failed to pull image ${ref}: ${errorText(e)}`);
  }
  const layers = new Map<string, PullProgress>();
  let lastTold = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      let stall: NodeJS.Timeout | undefined;
      const fail = (err: Error) => {
        clearTimeout(stall);
        clearTimeout(whole);
        (stream as unknown as { destroy(): void }).destroy();
        reject(err);
      };
      const arm = () => {
        clearTimeout(stall);
        stall = setTimeout(
          () => fail(new ImagePullError(`failed to pull image ${ref}: no progress for ${opts.activityMs} ms (pull_activity_timeout)`)),
          opts.activityMs,
        );
      };
      const whole = setTimeout(
        () => fail(new ImagePullError(`failed to pull image ${ref}: not done after ${opts.timeoutMs} ms (image_pull_timeout)`)),
        opts.timeoutMs,
      );
      arm();
      docker.modem.followProgress(
        stream,
        (err: Error | null) => {
          clearTimeout(stall);
          clearTimeout(whole);
          if (err) reject(new ImagePullError(`failed to pull image ${ref}: ${errorText(err)}`));
          else resolve();
        },
        (p: PullProgress) => {
          arm();
          if (p.error) return fail(new ImagePullError(`failed to pull image ${ref}: ${p.error}`));
          if (p.id && p.progressDetail) layers.set(p.id, p);
          const now = Date.now();
          if (layers.size && now - lastTold >= (opts.progressEveryMs ?? 2000)) {
            lastTold = now;
            opts.emit(`Docker image pull progress: ${progressLine(layers)}`);
          }
        },
      );
    });
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
  }
}

/** The image's id if the Engine has it. */
export async function imageId(docker: Dockerode, ref: string): Promise<string | undefined> {
  try {
    return (await docker.getImage(ref).inspect()).Id;
  } catch (e) {
    if ((e as { statusCode?: number }).statusCode === 404) return undefined;
    throw e;
  }
}

/**
 * Makes sure the task's image is on the Engine: `load` (a tarball in the task dir, put there by
 * an artifact) first, else a pull when missing or `force_pull`. Returns the image's id.
 */
export async function ensureImage(
  docker: Dockerode,
  config: TaskConfig,
  cfg: DockerTaskConfigInput,
  opts: { activityMs: number; emit: ImageEvent; signal: AbortSignal },
): Promise<string> {
  const ref = imageRef(cfg.image);
  if (cfg.load) {
    // As Nomad: relative to the task's local/ dir, where an artifact lands by default.
    const local = config.taskDir.localDir;
    const file = path.resolve(local, cfg.load);
    if (!file.startsWith(local + path.sep)) throw new DriverStartError(`task "${config.taskName}": load: ${cfg.load} is outside the task's local/ dir`, false);
    if (!fs.existsSync(file))
      throw new DriverStartError(`task "${config.taskName}": load: ${cfg.load} not found in the task's local/ dir (fetch it with an artifact)`, false);
    opts.emit('Loading image', { image: ref });
    const out = (await docker.loadImage(fs.createReadStream(file))) as NodeJS.ReadableStream;
    await new Promise<void>((resolve, reject) => docker.modem.followProgress(out, (err: Error | null) => (err ? reject(err) : resolve())));
    const id = await imageId(docker, ref);
    if (!id) throw new DriverStartError(`task "${config.taskName}": load: ${cfg.load} does not hold image ${ref}`, false);
    return id;
  }
  const have = cfg.force_pull ? undefined : await imageId(docker, ref);
  if (have) return have;
  opts.emit('Downloading image', { image: ref });
  const auth = one(cfg.auth);
  const pullTimeout = cfg.image_pull_timeout;
  const timeoutMs = typeof pullTimeout === 'number' ? pullTimeout : pullTimeout ? parseGoDuration(pullTimeout) : 5 * 60_000;
  try {
    await pullImage(docker, ref, {
      ...(auth && (auth.username || auth.password) ? { auth: { ...auth, serveraddress: auth.server_address ?? '' } } : {}),
      activityMs: opts.activityMs,
      timeoutMs,
      emit: opts.emit,
      signal: opts.signal,
    });
  } catch (e) {
    if (opts.signal.aborted) throw opts.signal.reason;
    // auth_soft_fail: a failed authenticated pull is retried without credentials.
    if (!(cfg.auth_soft_fail && auth)) throw new DriverStartError(errorText(e), true);
    await pullImage(docker, ref, { activityMs: opts.activityMs, timeoutMs, emit: opts.emit, signal: opts.signal }).catch((e2: unknown) => {
      throw new DriverStartError(errorText(e2), true);
    });
  }
  const id = await imageId(docker, ref);
  if (!id) throw new DriverStartError(`image ${ref} is missing after its pull`, true);
  return id;
}

/**
 * Nomad's image coordinator: how many tasks use each image; when the count drops to zero the
 * image is removed `delayMs` later, unless a task takes it again meanwhile.
 */
export class ImageRefs {
  readonly #users = new Map<string, Set<string>>();
  readonly #timers = new Map<string, unknown>();
  /** Pulls under way: which image a pull ends on is known only after it, so no removal runs meanwhile. */
  #pulls = 0;
  constructor(
    private readonly opts: { enabled: boolean; delayMs: number; clock: Clock; remove: (imageId: string) => Promise<void>; onError: (e: unknown) => void },
  ) {}

  /** `taskId` uses `image`. */
  take(image: string, taskId: string): void {
    const t = this.#timers.get(image);
    if (t !== undefined) {
      this.opts.clock.clearTimeout(t);
      this.#timers.delete(image);
    }
    let set = this.#users.get(image);
    if (!set) this.#users.set(image, (set = new Set()));
    set.add(taskId);
  }

  /** A pull begins; the function returned ends it. A removal due meanwhile waits another delay. */
  beginPull(): () => void {
    this.#pulls++;
    let ended = false;
    return () => {
      if (!ended) this.#pulls--;
      ended = true;
    };
  }

  /** `taskId` no longer uses `image`; the last user arms the removal. */
  release(image: string, taskId: string): void {
    const set = this.#users.get(image);
    if (!set?.delete(taskId) || set.size) return;
    this.#users.delete(image);
    if (!this.opts.enabled || this.#timers.has(image)) return;
    this.#arm(image);
  }

  #arm(image: string): void {
    this.#timers.set(
      image,
      this.opts.clock.setTimeout(() => {
        this.#timers.delete(image);
        if (this.#users.has(image)) return;
        // The pull under way may be of this image: its task takes it once the pull answers.
        if (this.#pulls > 0) return this.#arm(image);
        this.opts.remove(image).catch(this.opts.onError);
      }, this.opts.delayMs),
    );
  }

  /** Tasks using `image` now. */
  users(image: string): number {
    return this.#users.get(image)?.size ?? 0;
  }

  /** Cancels pending removals (the driver is going away). */
  close(): void {
    for (const t of this.#timers.values()) this.opts.clock.clearTimeout(t);
    this.#timers.clear();
  }
}
