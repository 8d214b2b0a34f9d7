/**
 * `npm run schema`: writes the JSON Schemas generated from berth's one schema definition to
 * `schema/` (committed and shipped; spec/model/json-schema.spec.ts checks they are current).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonSchemaFiles } from '../model/schema/json-schema.ts';

const dir = join(import.meta.dirname, '..', 'schema');
mkdirSync(dir, { recursive: true });
for (const [name, schema] of Object.entries(jsonSchemaFiles())) {
  writeFileSync(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote schema/${name}`);
}
