/**
 * JSON Schemas generated from THE schema (for editors: `"$schema"` in an allocation file gives
 * completion and checks). `npm run schema` writes them to `schema/`; a spec checks the committed
 * files equal what this code generates.
 * @module
 */
import { z } from 'zod';
import { allocationSchema, jobSchema, taskSchema } from './allocation.ts';
import { DRIVER_CONFIG_SCHEMAS } from './driver-config.ts';

type Json = Record<string, unknown>;

function generate(schema: z.ZodType, title: string): Json {
  const out = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    override: (ctx) => {
      // A shipped driver's config is checked by its own schema (what the refinement does at parse).
      if (ctx.zodSchema === taskSchema) {
        ctx.jsonSchema.allOf = Object.entries(DRIVER_CONFIG_SCHEMAS).map(([driver, s]) => ({
          if: { properties: { driver: { const: driver } }, required: ['driver'] },
          then: { properties: { config: z.toJSONSchema(s, { io: 'input', target: 'draft-2020-12' }) } },
        }));
        for (const branch of ctx.jsonSchema.allOf as Json[]) delete ((branch.then as Json).properties as Record<string, Json>).config!.$schema;
      }
    },
  }) as Json;
  return { $schema: out.$schema, title, ...out };
}

/** The JSON Schema of berth's allocation JSON (`schema/allocation.schema.json`). */
export function allocationJsonSchema(): Json {
  return generate(allocationSchema, 'berth allocation (camelCase, durations in ms)');
}

/** The JSON Schema of berth's job JSON (`schema/job.schema.json`). */
export function jobJsonSchema(): Json {
  return generate(jobSchema, 'berth job (camelCase, durations in ms)');
}

/** Every generated schema by file name under `schema/`. */
export function jsonSchemaFiles(): Record<string, Json> {
  return { 'allocation.schema.json': allocationJsonSchema(), 'job.schema.json': jobJsonSchema() };
}
