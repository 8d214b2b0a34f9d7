/**
 * Run as a child process by the inspector spec: connects an inspector to a port where nothing
 * listens, lets it retry a few times, stops it, and must then exit on its own.
 */
import { connectInspector } from '../../actors/inspect/ws-inspector.ts';

const insp = connectInspector({ url: 'ws://127.0.0.1:9', retryMs: 5, maxAttempts: 1000 });
setTimeout(() => {
  void insp.stop().then(() => console.log('stopped'));
}, 50);
