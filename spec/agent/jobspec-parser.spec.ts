/**
 * Large job files are parsed off the event loop (issue 33, finding 7): a file over the inline
 * bound goes to the parser's worker thread, so the main thread's parser never runs for it (its
 * whole-text scan counter stands still) and the agent answers other requests meanwhile; the
 * worker's errors arrive as the same JobspecErrors, with file, line, column and path; closing the
 * parser fails what is pending and ends the thread.
 */
import { expect } from 'chai';
import { INLINE_PARSE_BELOW, JobspecParser, JobspecParserClosedError } from '../../agent/jobs/jobspec-parser.ts';
import { textScans } from '../../agent/jobspec/source-index.ts';
import { JobspecError } from '../../model/errors.ts';
import { AgentProcess } from './../support/agent.ts';
import { manyGroups } from '../support/jobspec-pieces.ts';

describe('agent: job files parsed off the event loop', function () {
  this.timeout(120_000);
  const parser = new JobspecParser();
  after(() => parser.close());

  it('a small file parses in-process, a large one in the worker thread', async () => {
    const small = manyGroups(2);
    expect(small.length).to.be.below(INLINE_PARSE_BELOW);
    let before = textScans();
    expect((await parser.parse(small)).ID).to.equal('many');
    expect(textScans(), 'the small file was indexed here').to.be.above(before);
    const large = manyGroups(400);
    expect(large.length).to.be.at.least(INLINE_PARSE_BELOW);
    before = textScans();
    const api = await parser.parse(large);
    expect(api.TaskGroups).to.have.length(400);
    expect(textScans(), 'the large file was not indexed on this thread').to.equal(before);
  });

  it("the worker's refusal is a JobspecError with file, line, column and path", async () => {
    const text = manyGroups(400, 399);
    const line = text.split('\n').findIndex((l) => l.includes('bogus_key')) + 1;
    let err: unknown;
    try {
      await parser.parse(text, { filename: 'big.nomad.hcl' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(JobspecError);
    const e = err as JobspecError;
    expect([e.file, e.line, e.column]).to.deep.equal(['big.nomad.hcl', line, 7]);
    expect(e.path).to.equal('job.taskGroups[399].tasks[0].bogus_key');
    expect(e.message).to.match(/^big\.nomad\.hcl:\d+:7: /);
  });

  it('close fails a pending parse with JobspecParserClosedError, and later parses too', async () => {
    const p = new JobspecParser();
    let err: unknown;
    const pending = p.parse(manyGroups(2_000)).catch((e: unknown) => (err = e));
    await p.close();
    await pending;
    expect(err).to.be.instanceOf(JobspecParserClosedError);
    let later: unknown;
    await p.parse('job "x" {}').catch((e: unknown) => (later = e));
    expect(later).to.be.instanceOf(JobspecParserClosedError);
  });

  it('the agent answers while it parses a 1 MiB job file', async () => {
    const agent = await new AgentProcess(['-dev']).ready();
    try {
      const big = manyGroups(10_000);
      expect(big.length).to.be.above(1 << 20);
      let parsed = false;
      const parse = agent.req('POST', '/v1/jobs/parse', { JobHCL: big }).then((r) => {
        parsed = true;
        return r;
      });
      // Status requests while the parse is in flight: at least two answered before it ends
      // (with the parse on the event loop, none is served until it is done).
      let answered = 0;
      while (!parsed && answered < 2) {
        const r = await agent.req('GET', '/v1/agent/health');
        if (!parsed) answered++;
        expect(r.status).to.equal(200);
      }
      const r = await parse;
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
      expect((r.json as { TaskGroups: unknown[] }).TaskGroups).to.have.length(10_000);
      expect(answered).to.equal(2);
    } finally {
      await agent.stop();
    }
  });
});
