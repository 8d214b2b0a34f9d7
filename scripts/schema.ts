/**
 * `npm run schema`: writes the JSON Schemas generated from berth's one schema definition to
 * `schema/` (committed and shipped; spec/model/json-schema.spec.ts checks they are current).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { allocationFieldTable, FIELD_TABLE_MARKERS, jsonSchemaFiles } from '../model/schema/json-schema.ts';

const dir = join(import.meta.dirname, '..', 'schema');
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(jsonSchemaFiles())) {
  writeFileSync(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote schema/${name}`);
}

// The field reference in docs/allocation.md, between its markers.
const doc = join(import.meta.dirname, '..', 'docs', 'allocation.md');
const [begin, end] = FIELD_TABLE_MARKERS;
const text = readFileSync(doc, 'utf8');
const i = text.indexOf(begin);
const j = text.indexOf(end);
if (i < 0 || j < i) throw new Error(`docs/allocation.md lacks the markers ${begin} ... ${end}`);
writeFileSync(doc, `${text.slice(0, i + begin.length)}\n\n${allocationFieldTable()}\n\n${text.slice(j)}`);
console.log('wrote the field table in docs/allocation.md');
