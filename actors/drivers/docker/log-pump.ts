/**
 * A container's stdout and stderr, followed through the Engine's logs API and written into the
 * alloc's rotated log files (`<alloc>/alloc/logs/<task>.stdout.N`), the same files and rotation
 * as raw_exec, so `alloc logs`, the fs API and the viewer read them unchanged. The files are
 * written with backpressure, so a flooding container is bounded as a flooding process is.
 * @module
 */
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type Dockerode from 'dockerode';
import type { TaskConfig } from '../driver.ts';
import { FileRotator, rotatingStream } from '../logs/rotator.mjs';

/** A running copy of a container's output. */
export interface LogPump {
  /** Resolves once the Engine ended the stream (the container stopped) and the files are closed. */
  readonly done: Promise<void>;
  /** Stops copying now (the driver is shutting down). */
  stop(): void;
}

/** Follows the container's logs from `sinceSec` (0: from its start). */
export async function startLogPump(docker: Dockerode, containerId: string, config: TaskConfig, sinceSec: number): Promise<LogPump> {
  const size = config.logs.maxFileSizeMB * 1024 * 1024;
  const rot = (stream: string) =>
    new FileRotator({ dir: config.allocDir.logsDir, baseName: `${config.taskName}.${stream}`, maxFiles: config.logs.maxFiles, fileSize: size });
  const outRot = rot('stdout');
  const errRot = rot('stderr');
  outRot.open();
  errRot.open();
  const source = (await docker.getContainer(containerId).logs({ follow: true, stdout: true, stderr: true, since: sinceSec })) as NodeJS.ReadableStream;
  const out = new PassThrough();
  const err = new PassThrough();
  docker.modem.demuxStream(source, out, err);
  source.on('end', () => {
    out.end();
    err.end();
  });
  source.on('error', () => {
    out.end();
    err.end();
  });
  const done = Promise.allSettled([pipeline(out, rotatingStream(outRot)), pipeline(err, rotatingStream(errRot))]).then(() => undefined);
  return {
    done,
    stop: () => {
      (source as unknown as { destroy(): void }).destroy();
      out.end();
      err.end();
    },
  };
}
