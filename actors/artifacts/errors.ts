/**
 * Errors of artifact fetching. Each message is what the task's "Failed Artifact Download" event
 * says after `failed to download artifact "<source>": `.
 * @module
 */
import { BerthError } from '../../model/errors.ts';
import type { Artifact } from '../../model/types.ts';

/** The artifact cannot be fetched as given (source, getter, destination, options). */
export class ArtifactError extends BerthError {}

/** The download or its checksum file answered badly, or the checksum did not match. */
export class ArtifactDownloadError extends BerthError {}

/** The download went past its bound in bytes or time. */
export class ArtifactLimitError extends BerthError {}

/**
 * One of a task's artifacts failed (the others were stopped): `artifact` is the one, the message
 * Nomad's `failed to download artifact "<source>": <reason>`, the cause the fetch's own error.
 */
export class ArtifactFetchError extends BerthError {
  constructor(
    readonly artifact: Artifact,
    cause: unknown,
  ) {
    super(`failed to download artifact ${JSON.stringify(artifact.source)}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
