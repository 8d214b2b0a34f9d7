/**
 * Errors of artifact fetching. Each message is what the task's "Failed Artifact Download" event
 * says after `failed to download artifact "<source>": `.
 * @module
 */
import { BerthError } from '../../model/errors.ts';

/** The artifact cannot be fetched as given (source, getter, destination, options). */
export class ArtifactError extends BerthError {}

/** The download or its checksum file answered badly, or the checksum did not match. */
export class ArtifactDownloadError extends BerthError {}

/** The download went past its bound in bytes or time. */
export class ArtifactLimitError extends BerthError {}
