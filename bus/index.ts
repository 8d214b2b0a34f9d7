/** The bus and the broadcaster. @module */
export * from './bus.ts';
export * from './messages.ts';
export * from './broadcaster.ts';
