/**
 * The errors of berth's Go `text/template` engine; their messages are Go's, byte for byte.
 * @module
 */
import { BerthError } from '../../model/errors.ts';

/** A template failed to parse: `template: NAME:LINE: ...` as Go's `parse` package words it. */
export class TemplateParseError extends BerthError {}

/** A template failed while executing: `template: NAME:LINE:COL: executing "NAME" at <NODE>: ...`. */
export class TemplateExecError extends BerthError {
  /** What the template had written before it failed (Go writes it to the writer too). */
  output = '';
  constructor(
    message: string,
    /** The name of the template that was executing. */
    readonly templateName: string,
  ) {
    super(message);
  }
}

/** Thrown by a template function (or a builtin) to report an error; the engine wraps it as `error calling NAME: ...`. */
export class TemplateFuncError extends BerthError {}
