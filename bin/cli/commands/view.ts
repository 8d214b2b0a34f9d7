/**
 * `berth view <recording>`: reserved for berth's own viewer (replaying a recorded run). Not
 * available in this version; it says so and exits 2.
 * @module
 */
import { type Command } from '../command.ts';
import { UsageError } from '../errors.ts';

export const viewCommand: Command = {
  name: 'view',
  summary: 'replay a recorded run in the viewer (not available yet)',
  help: 'usage: berth view <recording>\n\nNot available yet: this version of berth has no viewer. Use berth run --inspect for the Stately inspector.',
  async run() {
    throw new UsageError('view is not available yet: this version of berth has no viewer (berth run --inspect serves the Stately inspector)', 'view');
  },
};
