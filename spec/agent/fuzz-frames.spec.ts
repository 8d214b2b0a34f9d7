/**
 * Malformed input over raw sockets (issue 33, finding 2): WebSocket frames a browser would never
 * send (oversize, bad UTF-8, RSV bits, reserved opcodes, unmasked, long or fragmented control
 * frames, truncated, lying lengths), random bytes after the handshake, and broken HTTP bodies
 * and chunked encodings. Each case may close its own connection; the agent must live and keep
 * answering. A fixed table plus a seeded, bounded fast-check run.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { AgentProcess, waitFor } from '../support/agent.ts';
import { stopCliProcesses } from '../support/cli.ts';
import { propertyRuns, propertyTimeout } from '../property/settings.ts';

/** One WebSocket frame, spelled byte by byte so it can be wrong in any field. */
interface FrameSpec {
  fin?: boolean;
  rsv?: number; // 0..7, placed in bits 6..4 of the first byte
  opcode: number;
  payload: Buffer;
  mask?: boolean;
  /** Announce this length instead of the payload's. */
  announce?: number;
  /** Force the 64-bit length form. */
  long64?: boolean;
}

function frame(f: FrameSpec): Buffer {
  const b0 = ((f.fin ?? true) ? 0x80 : 0) | ((f.rsv ?? 0) << 4) | (f.opcode & 0x0f);
  const len = f.announce ?? f.payload.length;
  const mask = f.mask ?? true;
  const head: number[] = [b0];
  const m = mask ? 0x80 : 0;
  if (f.long64 || len > 0xffff) {
    head.push(m | 127);
    const l = Buffer.alloc(8);
    l.writeBigUInt64BE(BigInt(len));
    head.push(...l);
  } else if (len > 125) head.push(m | 126, len >> 8, len & 0xff);
  else head.push(m | len);
  if (!mask) return Buffer.concat([Buffer.from(head), f.payload]);
  const key = randomBytes(4);
  const body = Buffer.from(f.payload);
  for (let i = 0; i < body.length; i++) body[i]! ^= key[i % 4]!;
  return Buffer.concat([Buffer.from(head), key, body]);
}

const text = (s: string | Buffer, o: Partial<FrameSpec> = {}) => frame({ opcode: 1, payload: Buffer.from(s), ...o });

/** The malformed frames, each named for what is wrong with it. */
const FRAMES: Array<[string, Buffer]> = [
  ['text frame of 1.5 MB (over maxPayload)', text(Buffer.alloc(1.5 * 1024 * 1024, 0x61))],
  ['announced 64-bit length of 2^62', frame({ opcode: 2, payload: Buffer.alloc(0), announce: 2 ** 52, long64: true })],
  ['text frame with invalid UTF-8', text(Buffer.from([0x7b, 0xff, 0xfe, 0xc3, 0x28, 0x7d]))],
  ['RSV1 set (no extension agreed)', text('{}', { rsv: 4 })],
  ['RSV2 set', text('{}', { rsv: 2 })],
  ['RSV3 set', text('{}', { rsv: 1 })],
  ['reserved data opcode 3', frame({ opcode: 3, payload: Buffer.from('x') })],
  ['reserved control opcode 0xB', frame({ opcode: 0xb, payload: Buffer.from('x') })],
  ['unmasked client frame', text('{"stdin":{"data":"aGk="}}', { mask: false })],
  ['ping of 126 bytes (control frame too long)', frame({ opcode: 9, payload: Buffer.alloc(126) })],
  ['fragmented ping', frame({ opcode: 9, fin: false, payload: Buffer.from('p') })],
  ['continuation with nothing to continue', frame({ opcode: 0, payload: Buffer.from('x') })],
  ['new text frame inside a fragmented message', Buffer.concat([text('{"st', { fin: false }), text('din"}')])],
  ['close frame with a 1-byte body', frame({ opcode: 8, payload: Buffer.from([3]) })],
  ['close frame with code 999', frame({ opcode: 8, payload: Buffer.from([0x03, 0xe7]) })],
  ['close frame with an invalid UTF-8 reason', frame({ opcode: 8, payload: Buffer.from([0x03, 0xe8, 0xff]) })],
  ['truncated frame (announces 100, sends 10)', text(Buffer.alloc(10, 0x61), { announce: 100 })],
  ['truncated header', Buffer.from([0x81])],
  [
    'valid frames of junk: not JSON, bad base64, wrong shapes',
    Buffer.concat([text('not json'), text('{"stdin":{"data":"%%%"}}'), text('{"stdin":7}'), text('[]'), text('null')]),
  ],
];

/** Raw HTTP requests with broken bodies or framing. */
const BODIES: Array<[string, string]> = [
  ['chunk size that is not hex', 'POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'],
  ['chunk larger than announced', 'POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{"Job":1}\r\n0\r\n\r\n'],
  ['chunked body cut off', 'POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nffff\r\n{"Job":'],
  ['Content-Length larger than the body', 'POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{"Job":'],
  [
    'Content-Length and chunked both',
    'POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{}}\r\n0\r\n\r\n',
  ],
  ['two Content-Lengths', 'POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}'],
  ['negative Content-Length', 'POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n{}'],
  ['body that is not JSON', 'POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\n{{{{{'],
  ['body of invalid UTF-8', 'POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\n\xff\xfe{}'],
  ['NUL in a header', 'GET /v1/agent/self HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\0b\r\n\r\n'],
  ['no HTTP version', 'GET /v1/agent/self\r\n\r\n'],
  ['garbage request line', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n'],
  ['upgrade to something else', 'GET /v1/client/allocation/x/exec HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n'],
  [
    'websocket upgrade without a key',
    'GET /v1/client/allocation/x/exec HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n',
  ],
  [
    'websocket upgrade with an upgrade body',
    'GET /v1/client/allocation/x/exec HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA==\r\nContent-Length: 4\r\n\r\n\x88\x80\x00',
  ],
];

/** Opens a raw socket and writes `bytes`; resolves once the agent closed it or `end` half-closed it. */
async function raw(
  addr: { host: string; port: number },
  bytes: Buffer | string,
  wait: (s: Socket, got: () => Buffer) => Promise<void> = async () => undefined,
): Promise<Buffer> {
  const s = connect(addr.port, addr.host);
  s.on('error', () => undefined); // the agent may reset the connection: that is allowed
  await once(s, 'connect');
  let got = Buffer.alloc(0);
  s.on('data', (c: Buffer) => (got = Buffer.concat([got, c])));
  await wait(s, () => got);
  s.write(bytes);
  s.end();
  // A reset is an allowed answer (events.once would reject on it): wait for the close only.
  if (!s.closed) await new Promise((r) => s.once('close', r));
  return got;
}

/** An upgrade request for the exec socket, then waits for the 101 before the frames go out. */
function upgradeThen(path: string): (s: Socket, got: () => Buffer) => Promise<void> {
  return async (s, got) => {
    s.write(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n\r\n`,
    );
    while (!got().includes('\r\n\r\n')) await once(s, 'data');
    expect(got().toString('latin1')).to.match(/^HTTP\/1\.1 101 /);
  };
}

describe('agent: malformed frames and bodies (fuzz)', function () {
  this.timeout(propertyTimeout(240_000));
  let agent: AgentProcess;
  let addr: { host: string; port: number };
  let execPath = '';

  before(async () => {
    agent = await new AgentProcess(['-dev']).ready();
    const u = new URL(agent.url);
    addr = { host: u.hostname, port: Number(u.port) };
    await agent.req('POST', '/v1/jobs', {
      Job: {
        ID: 'fz',
        Type: 'service',
        TaskGroups: [
          {
            Name: 'g',
            Tasks: [
              {
                Name: 't',
                Driver: 'raw_exec',
                Config: { command: '/bin/sh', args: ['-c', "trap 'exit 0' TERM; while :; do sleep 0.2; done"] },
                Resources: { CPU: 20, MemoryMB: 16 },
              },
            ],
          },
        ],
      },
    });
    const [alloc] = await waitFor(agent, '/v1/job/fz/allocations', (l: any[]) => l[0]?.ClientStatus === 'running', 'running');
    execPath = `/v1/client/allocation/${alloc.ID}/exec?task=t&command=${encodeURIComponent('["/bin/cat"]')}`;
  });
  after(async () => {
    await agent?.stop();
    await stopCliProcesses();
  });

  /** The agent still runs and answers. */
  async function alive(what: string): Promise<void> {
    expect(agent.proc.child.exitCode, `agent exited after: ${what}\n${agent.proc.stderr.slice(-2000)}`).to.equal(null);
    const r = await agent.req('GET', '/v1/agent/self');
    expect(r.status, what).to.equal(200);
  }

  for (const [name, bytes] of FRAMES) {
    it(`exec socket of a live session: ${name}`, async () => {
      await raw(addr, bytes, upgradeThen(execPath));
      await alive(name);
    });
    it(`exec socket of an unknown alloc: ${name}`, async () => {
      await raw(addr, bytes, upgradeThen('/v1/client/allocation/nope/exec?task=t&command=%5B%22x%22%5D'));
      await alive(name);
    });
  }

  for (const [name, req] of BODIES) {
    it(`HTTP: ${name}`, async () => {
      await raw(addr, Buffer.from(req, 'latin1'));
      await alive(name);
    });
  }

  it('streams the client drops at once: event stream, log follow, fs stream', async () => {
    const [alloc] = (await agent.req('GET', '/v1/job/fz/allocations')).json;
    for (const p of [
      '/v1/event/stream',
      `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&follow=true`,
      `/v1/client/fs/stream/${alloc.ID}?path=alloc/logs/t.stdout.0&follow=true`,
    ]) {
      // Reset the connection right after the request, and again after the headers came back.
      await raw(addr, `GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      const s = connect(addr.port, addr.host);
      s.on('error', () => undefined);
      await once(s, 'connect');
      s.write(`GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await once(s, 'data');
      s.resetAndDestroy();
      if (!s.closed) await new Promise((r) => s.once('close', r));
      await alive(p);
    }
  });

  it('random bytes after the exec handshake (seeded)', async () => {
    const { seed, numRuns } = propertyRuns(25);
    const chunk = fc.oneof(
      fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)),
      fc
        .record({
          fin: fc.boolean(),
          rsv: fc.integer({ min: 0, max: 7 }),
          opcode: fc.integer({ min: 0, max: 15 }),
          mask: fc.boolean(),
          payload: fc.uint8Array({ maxLength: 200 }),
        })
        .map((f) => frame({ ...f, payload: Buffer.from(f.payload) })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(chunk, { minLength: 1, maxLength: 6 }), fc.boolean(), async (parts, live) => {
        await raw(addr, Buffer.concat(parts), upgradeThen(live ? execPath : '/v1/client/allocation/nope/exec?task=t&command=%5B%22x%22%5D'));
        await alive('random frames');
      }),
      { seed, numRuns },
    );
  });
});
