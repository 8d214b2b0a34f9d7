import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { allocationFieldTable, FIELD_TABLE_MARKERS, jsonSchemaFiles } from '../../model/schema/json-schema.ts';
import { parseAllocation } from '../../model/parse.ts';

const committed = (name: string) => JSON.parse(readFileSync(new URL(`../../schema/${name}`, import.meta.url), 'utf8'));

describe('JSON Schemas generated from the one schema definition', () => {
  // Generated inside each test, not once when this file loads: a schema built before any test
  // runs would hide a change to the generator from a test process that runs many times.
  const NAMES = ['allocation.schema.json', 'job.schema.json'];

  it('generates one schema per shipped file', () => {
    expect(Object.keys(jsonSchemaFiles())).to.deep.equal(NAMES);
  });

  for (const name of NAMES) {
    it(`schema/${name} is what the code generates (run npm run schema after changing model/schema/)`, () => {
      expect(committed(name)).to.deep.equal(jsonSchemaFiles()[name]);
    });
  }

  it('is strict (unknown keys are errors for an editor too) and checks a shipped driver config', () => {
    const alloc = jsonSchemaFiles()['allocation.schema.json'] as any;
    const task = alloc.properties.job.properties.taskGroups.items.properties.tasks.items;
    expect(task.additionalProperties).to.equal(false);
    expect(task.properties.resources.properties).to.have.property('memoryMB');
    const raw = task.allOf.find((b: any) => b.if.properties.driver.const === 'raw_exec');
    expect(raw.then.properties.config.required).to.deep.equal(['command']);
    expect(raw.then.properties.config.properties.args.type).to.equal('array');
  });

  it('docs/allocation.md lists every field, as generated', () => {
    const doc = readFileSync(new URL('../../docs/allocation.md', import.meta.url), 'utf8');
    const [begin, end] = FIELD_TABLE_MARKERS;
    const section = doc.slice(doc.indexOf(begin) + begin.length, doc.indexOf(end));
    // Compare cell by cell: prettier pads the table.
    const cells = (t: string) =>
      t
        .trim()
        .split('\n')
        .filter((l) => !/^\|[\s|:-]+\|$/.test(l))
        .map((l) => l.split(/(?<!\\)\|/).map((c) => c.trim()));
    expect(cells(section)).to.deep.equal(cells(allocationFieldTable()));
    for (const f of [
      'job.taskGroups[].tasks[].resources.memoryMB',
      'job.taskGroups[].tasks[].meta',
      'job.taskGroups[].shutdownDelayMs',
      'job.taskGroups[].maxRunDurationMs',
    ])
      expect(section).to.include(`\`${f}\``);
  });

  it('an allocation file may name its schema', () => {
    const alloc = parseAllocation({
      $schema: './node_modules/berth/schema/allocation.schema.json',
      job: { id: 'j', taskGroups: [{ name: 'g', tasks: [{ name: 't', driver: 'mock_driver' }] }] },
      taskGroup: 'g',
    });
    expect(alloc).to.not.have.property('$schema');
  });

  it('is shipped in the package', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(pkg.files).to.include('schema/');
    expect(pkg.scripts.schema).to.be.a('string');
  });
});
