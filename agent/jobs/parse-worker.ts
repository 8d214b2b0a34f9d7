/**
 * The jobspec parser's worker thread: parses job files off the agent's event loop (HashiCorp's
 * HCL parser is a wasm build that runs synchronously, ~1.5 s per MiB), answering each
 * `{ id, text, opts }` with the API job or the error's fields.
 * @module
 */
import { parentPort } from 'node:worker_threads';
import { JobspecError, errorText } from '../../index.ts';
import { parseJobFile, type ParseJobFileOptions } from './jobspec.ts';
import type { ParseReply, ParseRequest } from './jobspec-parser.ts';

parentPort!.on('message', (req: ParseRequest) => {
  void parseJobFile(req.text, req.opts as ParseJobFileOptions).then(
    (job) => parentPort!.postMessage({ id: req.id, job } satisfies ParseReply),
    (e: unknown) =>
      parentPort!.postMessage({
        id: req.id,
        error:
          e instanceof JobspecError
            ? { jobspec: true, message: e.message, file: e.file, line: e.line, column: e.column, path: e.path, issues: e.issues, unsupported: e.unsupported }
            : { jobspec: false, message: errorText(e) },
      } satisfies ParseReply),
  );
});
