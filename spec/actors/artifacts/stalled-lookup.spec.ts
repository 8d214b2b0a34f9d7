/**
 * One alloc's artifact host lookup that hangs must not hold up anything else (issue #36): the
 * lookup runs on c-ares, not on libuv's threadpool that every alloc's fs work shares.
 */
import { expect } from 'chai';
import { stat } from 'node:fs/promises';
import { pbkdf2 as pbkdf2Cb } from 'node:crypto';
import { promisify } from 'node:util';
import dgram from 'node:dgram';
import { lookup as systemLookup } from 'node:dns/promises';
import { resolverLookup } from '../../../actors/artifacts/lookup.ts';
import { ArtifactDownloadError } from '../../../actors/artifacts/errors.ts';
import { makeAlloc } from '../../support/fixtures.ts';
import { holdThreadpool, threadsWaitingForWriter } from '../../support/pool-hold.ts';
import { useTempClients, viewWhere } from '../../support/temp-client.ts';

/** A DNS server on loopback UDP: answers A queries with 127.0.0.1 (AAAA with none), or swallows every query. */
async function dnsServer(mode: 'answer' | 'swallow') {
  const sock = dgram.createSocket('udp4');
  const queries: string[] = [];
  sock.on('message', (msg, from) => {
    // Question: labels from offset 12, then type (2 bytes) and class (2 bytes).
    let i = 12;
    const labels: string[] = [];
    while (msg[i]! > 0) {
      labels.push(msg.subarray(i + 1, i + 1 + msg[i]!).toString());
      i += msg[i]! + 1;
    }
    const qEnd = i + 5;
    const type = msg.readUInt16BE(i + 1);
    queries.push(`${labels.join('.')} ${type === 1 ? 'A' : type === 28 ? 'AAAA' : type}`);
    if (mode === 'swallow') return;
    const header = Buffer.from(msg.subarray(0, 12));
    header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, NOERROR
    header.writeUInt16BE(type === 1 ? 1 : 0, 6); // answers
    header.writeUInt16BE(0, 8);
    header.writeUInt16BE(0, 10);
    const answer = type === 1 ? Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]) : Buffer.alloc(0);
    sock.send(Buffer.concat([header, msg.subarray(12, qEnd), answer]), from.port, from.address);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  return { server: `127.0.0.1:${sock.address().port}`, queries, close: () => new Promise<void>((r) => sock.close(() => r())) };
}

const pbkdf2 = promisify(pbkdf2Cb);

describe('artifacts: a hanging host lookup stalls nothing else', function () {
  this.timeout(30_000);
  const newClient = useTempClients();

  it('a host is resolved while every threadpool thread is held (getaddrinfo waits for a free one)', async () => {
    const dns = await dnsServer('answer');
    const pool = await holdThreadpool();
    let systemDone = false;
    const system = systemLookup('localhost').finally(() => (systemDone = true));
    try {
      const got = await resolverLookup({ servers: [dns.server] })('svc.test', new AbortController().signal);
      expect(got).to.deep.equal([{ address: '127.0.0.1', family: 4 }]);
      expect(dns.queries).to.include.members(['svc.test A', 'svc.test AAAA']);
      // The control: the pool really is held, getaddrinfo has not run.
      expect(systemDone, 'getaddrinfo ran with the pool held').to.equal(false);
    } finally {
      await pool.release();
      await system;
      await dns.close();
    }
  });

  it("the pool hold of these specs is released whole even when the pool was busy as it began (a stranded thread is the suite's pool gone)", async () => {
    // Work queued ahead of the FIFO opens: they start only as it ends, after the hold was asked for.
    const busy = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE) || 4 }, () => pbkdf2('x', 'y', 50_000, 32, 'sha256'));
    const pool = await holdThreadpool();
    try {
      // Resolved only once real: every thread in its FIFO open, the queued work done before them.
      expect(threadsWaitingForWriter()).to.equal(busy.length);
      await Promise.all(busy);
      let statDone = false;
      const probe = stat('/').then(() => (statDone = true));
      await new Promise((r) => setTimeout(r, 20));
      expect(statDone, 'an fs call ran with the pool held').to.equal(false);
      await pool.release();
      await probe;
    } finally {
      await pool.release(); // a second call is a no-op
    }
    expect(threadsWaitingForWriter()).to.equal(0);
  });

  it('a lookup the server never answers is ended by its abort signal, and bounded by its timeout, with a named error', async () => {
    const dns = await dnsServer('swallow');
    try {
      const ac = new AbortController();
      const pending = resolverLookup({ servers: [dns.server], timeoutMs: 600_000 })('stuck.test', ac.signal);
      while (dns.queries.length < 2) await new Promise((r) => setImmediate(r));
      ac.abort(new Error('stopped'));
      const aborted = await pending.then(
        () => undefined,
        (e: Error) => e,
      );
      expect(aborted?.message).to.equal('stopped');
      // A short per-query timeout (1 try): a typed error that says what timed out.
      const timedOut = await resolverLookup({ servers: [dns.server], timeoutMs: 50, tries: 1 })('stuck.test', new AbortController().signal).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(timedOut).to.be.instanceOf(ArtifactDownloadError);
      expect(timedOut!.message).to.equal('lookup stuck.test: ETIMEOUT');
    } finally {
      await dns.close();
    }
  });

  it('one alloc whose artifact host lookup hangs: another alloc on the same client builds its task dir and runs meanwhile', async () => {
    const dns = await dnsServer('swallow');
    try {
      const client = newClient({ artifacts: { lookup: resolverLookup({ servers: [dns.server], timeoutMs: 600_000 }) } });
      const restartPolicy = { attempts: 0, intervalMs: 600_000, delayMs: 0, mode: 'fail' as const };
      const stuck = makeAlloc([{ name: 'fetcher', driver: 'raw_exec', config: { command: 'true' }, artifacts: [{ source: 'http://stuck.test/go.mod' }] }], {
        jobType: 'batch',
        group: { restartPolicy },
      });
      const healthy = makeAlloc([{ name: 'sleeper', driver: 'raw_exec', config: { command: 'sleep', args: ['30'] }, killTimeoutMs: 1000 }], {
        group: { restartPolicy },
      });
      const a = client.addAlloc(stuck);
      // A's fetch is in its lookup (the server got the queries) before B is even added.
      while (dns.queries.length < 2) await new Promise((r) => setImmediate(r));
      const b = client.addAlloc(healthy);
      await viewWhere(client, b, (x) => x.taskStates?.sleeper?.state === 'running');
      // A is still in its prestart (no start, no failure), its lookup still unanswered.
      const fetcher = a.alloc().taskStates!.fetcher!;
      expect(fetcher.state).to.equal('pending');
      expect(fetcher.events.map((e) => e.type)).to.deep.equal(['Received', 'Task Setup']);
      expect(dns.queries).to.deep.equal(['stuck.test A', 'stuck.test AAAA']);
    } finally {
      await dns.close();
    }
  });
});
