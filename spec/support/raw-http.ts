/**
 * HTTP by hand over `net.connect`: the request line and headers exactly as written (no client
 * library cleaning the target), the answer's status, headers and body. For the agent's edge specs.
 */
import net from 'node:net';

/** What came back. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body, when it had a Content-Length; '' for a stream (read up to the headers only). */
  body: string;
}

/**
 * Sends `GET /x HTTP/1.1`-style `requestLine` with `headers` (a `Host` for `127.0.0.1:port` and
 * `Connection: close` unless given) and `body`; resolves once the header block and any
 * Content-Length body are in, then closes the socket (so streams and upgrades end there).
 */
export function rawRequest(port: number, requestLine: string, headers: Record<string, string> = {}, body = ''): Promise<RawAnswer> {
  const h: Record<string, string> = { Host: `127.0.0.1:${port}`, Connection: 'close', ...headers };
  for (const k of Object.keys(h)) if (h[k] === '') delete h[k];
  if (body && h['Content-Length'] === undefined) h['Content-Length'] = String(Buffer.byteLength(body));
  const text = `${requestLine}\r\n${Object.entries(h)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (a: RawAnswer | Error) => {
      if (done) return;
      done = true;
      sock.destroy();
      if (a instanceof Error) reject(a);
      else resolve(a);
    };
    sock.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [line, ...rest] = buf.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(line!)?.[1] ?? NaN);
      const headers: Record<string, string> = {};
      for (const l of rest) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const len = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
      const got = buf.subarray(end + 4);
      if (len === undefined) finish({ status, headers, body: '' });
      else if (got.length >= len) finish({ status, headers, body: got.subarray(0, len).toString('utf8') });
    });
    sock.on('error', (e) => finish(e));
    sock.on('close', () => finish(new Error(`connection closed before an answer to ${requestLine}: ${buf.toString('latin1').slice(0, 200)}`)));
    sock.write(text);
    if (body) sock.write(body);
  });
}

/** The headers of a WebSocket handshake (what a browser or Nomad's client sends on exec). */
export const WS_HEADERS: Record<string, string> = {
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Version': '13',
  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
};
