/**
 * The JSON Schema of a tool's zod schema (src/tools/jsonSchema.ts), kind by kind, beside what
 * zod's own z.toJSONSchema says of the same schema: the same constraints in the dialect tools/list
 * sends (anyOf for a nullable, no safe-integer bounds, no `$schema`). A kind the converter does not
 * know is an error, not a schema quietly wrong.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as z from 'zod';
import { toolJsonSchema } from '../../src/tools/jsonSchema.js';

const field = (schema: z.ZodType, io: 'input' | 'output' = 'input'): unknown => (toolJsonSchema(z.object({ f: schema }), io) as { properties: { f: unknown } }).properties.f;

test('each zod kind a tool uses, as tools/list sends it (table)', () => {
  enum Numeric {
    One = 1,
    Two = 2,
  }
  const cases: Array<[string, z.ZodType, unknown]> = [
    ['string with bounds and a pattern', z.string().min(1).max(8).regex(/^[a-z]+$/), { type: 'string', minLength: 1, maxLength: 8, pattern: '^[a-z]+$' }],
    ['trimmed and refined string', z.string().trim().refine((s) => s !== 'x'), { type: 'string' }],
    ['integer, safe range left out', z.number().int(), { type: 'integer' }],
    ['integer with bounds', z.number().int().min(0).max(10), { type: 'integer', minimum: 0, maximum: 10 }],
    ['the tighter of two bounds', z.number().min(1).min(3).max(9).max(7), { type: 'number', minimum: 3, maximum: 7 }],
    ['exclusive bounds', z.number().gt(0).lt(1), { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }],
    ['boolean', z.boolean(), { type: 'boolean' }],
    ['null', z.null(), { type: 'null' }],
    ['anything', z.unknown(), {}],
    ['string enum', z.enum(['a', 'b']), { type: 'string', enum: ['a', 'b'] }],
    ['numeric TypeScript enum', z.enum(Numeric), { type: 'number', enum: [1, 2] }],
    ['literal', z.literal('x'), { type: 'string', const: 'x' }],
    ['literals', z.literal(['x', 'y']), { type: 'string', enum: ['x', 'y'] }],
    ['array with bounds', z.array(z.string()).min(1).max(3), { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 }],
    ['array of anything', z.array(z.unknown()), { type: 'array' }],
    ['tuple', z.tuple([z.number(), z.number()]), { type: 'array', items: [{ type: 'number' }, { type: 'number' }], additionalItems: false, minItems: 2, maxItems: 2 }],
    ['nullable', z.string().nullable(), { anyOf: [{ type: 'string' }, { type: 'null' }] }],
    ['union', z.union([z.string(), z.number()]), { anyOf: [{ type: 'string' }, { type: 'number' }] }],
    ['record of strings', z.record(z.string(), z.number()), { type: 'object', additionalProperties: { type: 'number' } }],
    ['record of anything', z.record(z.string(), z.unknown()), { type: 'object', additionalProperties: true }],
    ['record over an enum', z.record(z.enum(['a', 'b']), z.number()), { type: 'object', propertyNames: { type: 'string', enum: ['a', 'b'] }, additionalProperties: { type: 'number' }, required: ['a', 'b'] }],
    ['partial record over an enum', z.partialRecord(z.enum(['a']), z.number()), { type: 'object', propertyNames: { type: 'string', enum: ['a'] }, additionalProperties: { type: 'number' } }],
    ['default and description', z.number().default(3).describe('how many'), { type: 'number', default: 3, description: 'how many' }],
    ['the outer description', z.string().describe('inner').optional().describe('outer'), { type: 'string', description: 'outer' }],
  ];
  for (const [name, schema, expected] of cases) {
    assert.deepEqual(field(schema), expected, name);
    // zod's converter says the same, in its own dialect.
    const zod = JSON.parse(JSON.stringify(z.toJSONSchema(z.object({ f: schema }), { target: 'draft-7', io: 'input' }))).properties.f;
    for (const key of ['minLength', 'maxLength', 'pattern', 'exclusiveMinimum', 'exclusiveMaximum', 'enum', 'const', 'default', 'description', 'minItems', 'maxItems', 'required'] as const) {
      assert.deepEqual((expected as Record<string, unknown>)[key], zod[key], `${name}: ${key}`);
    }
  }
});

test('objects: required by io, closed inputs, open outputs', () => {
  const schema = z.object({ a: z.string(), b: z.number().default(1), c: z.boolean().optional() }).strict();
  assert.deepEqual(toolJsonSchema(schema, 'input'), {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'number', default: 1 }, c: { type: 'boolean' } },
    required: ['a'],
    additionalProperties: false,
  });
  // An answer always has a defaulted field, and may gain fields.
  assert.deepEqual(toolJsonSchema(schema, 'output'), {
    type: 'object',
    properties: { a: { type: 'string' }, b: { type: 'number', default: 1 }, c: { type: 'boolean' } },
    required: ['a', 'b'],
  });
  assert.deepEqual(toolJsonSchema(z.looseObject({}), 'input'), { type: 'object', properties: {}, additionalProperties: true });
});

test('a kind, check or metadata the converter does not know is an error naming it', () => {
  const cases: Array<[z.ZodType, RegExp]> = [
    [z.string().email(), /the check 'string_format: email'/],
    [z.number().multipleOf(2), /the check 'multiple_of'/],
    [z.date(), /the kind 'date'/],
    [z.string().transform((s) => s.length), /the kind 'pipe'/],
    [z.string().meta({ title: 'T' }), /the metadata 'title'/],
    [z.string().regex(/a/).regex(/b/), /a second pattern/],
  ];
  for (const [schema, message] of cases) assert.throws(() => field(schema), message);
});
