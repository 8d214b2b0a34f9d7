/**
 * The command line's named errors. Both mean "the user asked for something we cannot do" and end
 * the command with exit code 2 and one line on stderr, never a stack trace.
 * @module
 */
import { BerthError } from '../../model/errors.ts';

/** A bad command line: an unknown command or flag, a missing argument, a bad flag value. */
export class UsageError extends BerthError {
  /** The command whose usage line is worth showing, if any. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** A file (or stdin) that cannot be used: missing, unreadable, not JSON, not a valid allocation. */
export class InputError extends BerthError {
  /** Where the input came from: a path, or `<stdin>`. */
  readonly source: string;
  /** One line per problem (for an invalid allocation: `field.path: problem`). */
  readonly issues: string[];
  constructor(source: string, problem: string, issues: string[] = [], options?: { cause?: unknown }) {
    super(`${source}: ${problem}`, options);
    this.source = source;
    this.issues = issues;
  }
}
