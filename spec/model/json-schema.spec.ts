import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { jsonSchemaFiles } from '../../model/schema/json-schema.ts';

const committed = (name: string) => JSON.parse(readFileSync(new URL(`../../schema/${name}`, import.meta.url), 'utf8'));

describe('JSON Schemas generated from the one schema definition', () => {
  const generated = jsonSchemaFiles();

  for (const name of Object.keys(generated)) {
    it(`schema/${name} is what the code generates (run npm run schema after changing model/schema/)`, () => {
      expect(committed(name)).to.deep.equal(generated[name]);
    });
  }

  it('is strict (unknown keys are errors for an editor too) and checks a shipped driver config', () => {
    const alloc = generated['allocation.schema.json'] as any;
    const task = alloc.properties.job.properties.taskGroups.items.properties.tasks.items;
    expect(task.additionalProperties).to.equal(false);
    expect(task.properties.resources.properties).to.have.property('memoryMB');
    const raw = task.allOf.find((b: any) => b.if.properties.driver.const === 'raw_exec');
    expect(raw.then.properties.config.required).to.deep.equal(['command']);
    expect(raw.then.properties.config.properties.args.type).to.equal('array');
  });

  it('is shipped in the package', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(pkg.files).to.include('schema/');
    expect(pkg.scripts.schema).to.be.a('string');
  });
});
