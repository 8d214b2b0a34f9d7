// Preloaded (NODE_OPTIONS=--require) into Stryker's processes by scripts/mutate.mjs. Stryker's mocha
// runner 9.x requires mocha's CLI helpers without an extension ('mocha/lib/cli/run-helpers'); mocha
// 12 ships them as .cjs, which Node's CommonJS resolver does not try. Registering .cjs as a
// CommonJS extension makes the resolver try it, and nothing else changes.
'use strict';
const Module = require('node:module');
if (!Module._extensions['.cjs']) Module._extensions['.cjs'] = Module._extensions['.js'];
