/**
 * A tool's zod schema as the JSON Schema `tools/list` sends: portable to clients that map schemas
 * onto a single-`type` dialect (Gemini-style function declarations; the Inspector's `--strict`
 * lint), and no larger than it needs to be, since SDK clients compile every output schema on each
 * `listTools`.
 */
import * as z from 'zod';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Node = { [key: string]: Json };

const SAFE = Number.MAX_SAFE_INTEGER;

function isNode(value: Json | undefined): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmpty(value: Json | undefined): boolean {
  return isNode(value) && Object.keys(value).length === 0;
}

/** Rewrites one schema object in place; its subschemas were already rewritten. */
function tidy(node: Node): void {
  // zod spells a nullable scalar as `type: [t, "null"]`; single-type dialects need anyOf branches.
  if (Array.isArray(node.type)) {
    const branches = node.type.map((t) => ({ type: t }));
    delete node.type;
    node.anyOf = branches;
  }
  // zod bounds every int by the safe-integer range: true of any JSON number a client sends, so noise.
  if (node.minimum === -SAFE) delete node.minimum;
  if (node.maximum === SAFE) delete node.maximum;
  // JSON object keys are strings already.
  if (isNode(node.propertyNames) && node.propertyNames.type === 'string' && Object.keys(node.propertyNames).length === 1) delete node.propertyNames;
  // `{}` (any value) under these keywords is their default: an array of anything, an object with any values.
  if (isEmpty(node.items)) delete node.items;
  if (isEmpty(node.additionalProperties)) node.additionalProperties = true;
}

function walk(value: Json, io: 'input' | 'output'): Json {
  if (Array.isArray(value)) return value.map((v) => walk(v, io));
  if (!isNode(value)) return value;
  const out: Node = {};
  for (const [key, child] of Object.entries(value)) {
    // `properties` maps names to schemas, `enum`/`const`/`default` hold values: only schemas are rewritten.
    if (key === 'properties' && isNode(child)) out[key] = Object.fromEntries(Object.entries(child).map(([name, schema]) => [name, walk(schema, io)]));
    else if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples') out[key] = child;
    else out[key] = walk(child, io);
  }
  tidy(out);
  // Closed inputs tell a caller no other argument exists; an answer may gain fields without
  // breaking a client that validates it, and the schema is shorter.
  if (io === 'output' && out.additionalProperties === false) delete out.additionalProperties;
  return out;
}

/**
 * How deep an output schema spells its structure: the answer's fields and the fields of those
 * are typed and described; anything deeper is its type and description alone. SDK clients
 * compile every output schema with Ajv on each listTools, at a cost that follows its size (about
 * half with this depth; docs/architecture.md, "Build and start-up"), and the server checks every answer against the
 * full zod schema before sending it.
 */
const OUTPUT_DEPTH = 1;

/** A subschema cut to what a client needs to accept it and a reader to know it: type(s), values, description. */
function summary(node: Json): Json {
  if (!isNode(node)) return node;
  const out: Node = {};
  if (node.type !== undefined) out.type = node.type;
  if (Array.isArray(node.anyOf)) out.anyOf = node.anyOf.map((b): Json => (isNode(b) && b.type !== undefined ? { type: b.type } : {}));
  if (node.enum !== undefined) out.enum = node.enum;
  if (node.description !== undefined) out.description = node.description;
  return out;
}

function shallow(node: Json, level: number): Json {
  if (!isNode(node)) return node;
  const deeper = (child: Json, next: number): Json => (level < OUTPUT_DEPTH ? shallow(child, next) : summary(child));
  const out: Node = { ...node };
  if (isNode(node.properties)) out.properties = Object.fromEntries(Object.entries(node.properties).map(([name, child]) => [name, deeper(child, level + 1)]));
  if (isNode(node.items)) out.items = deeper(node.items, level);
  if (isNode(node.additionalProperties)) out.additionalProperties = deeper(node.additionalProperties, level + 1);
  if (Array.isArray(node.anyOf)) out.anyOf = node.anyOf.map((branch) => shallow(branch, level));
  return out;
}

type Def = { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; valueType?: z.ZodType; options?: z.ZodType[]; innerType?: z.ZodType };
const defOf = (schema: z.ZodType): Def => schema.def as unknown as Def;
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** `copy` with the metadata (description) `original` carries: zod keeps it beside the instance, not in its def. */
function withMeta(original: z.ZodType, copy: z.ZodType): z.ZodType {
  const meta = z.globalRegistry.get(original);
  if (meta !== undefined) z.globalRegistry.add(copy, meta);
  return copy;
}

const rebuilt = (schema: z.ZodType, def: Partial<Def>): z.ZodType => withMeta(schema, schema.clone({ ...schema.def, ...def } as never));

/** A schema that converts to the same summary (type(s), values, description) with nothing below it. */
function standIn(schema: z.ZodType): z.ZodType {
  const def = defOf(schema);
  if (def.type === 'object') return withMeta(schema, z.object({}));
  if (def.type === 'array') return withMeta(schema, z.array(z.unknown()));
  if (def.type === 'record') return withMeta(schema, z.record(z.string(), z.unknown()));
  if (def.type === 'union') return rebuilt(schema, { options: def.options!.map(standIn) });
  if (WRAPPERS.has(def.type)) return rebuilt(schema, { innerType: standIn(def.innerType!) });
  return schema;
}

/**
 * The output schema cut as `shallow` cuts its JSON, before converting it: zod converts a schema
 * whole, and the parts `shallow` would drop were most of the conversion's work and memory.
 */
function shallowZod(schema: z.ZodType, level: number): z.ZodType {
  const def = defOf(schema);
  const deeper = (child: z.ZodType, next: number): z.ZodType => (level < OUTPUT_DEPTH ? shallowZod(child, next) : standIn(child));
  if (def.type === 'object') return rebuilt(schema, { shape: Object.fromEntries(Object.entries(def.shape!).map(([name, child]) => [name, deeper(child, level + 1)])) });
  if (def.type === 'array') return rebuilt(schema, { element: deeper(def.element!, level) });
  if (def.type === 'record') return rebuilt(schema, { valueType: deeper(def.valueType!, level + 1) });
  if (def.type === 'union') return rebuilt(schema, { options: def.options!.map((option) => shallowZod(option, level)) });
  if (WRAPPERS.has(def.type)) return rebuilt(schema, { innerType: shallowZod(def.innerType!, level) });
  return schema;
}

/**
 * The JSON Schema of a tool's input (`io: 'input'`: defaults make fields optional) or output. No
 * `$schema`: these schemas use only keywords draft-07 and 2020-12 read alike, and a client assumes
 * one of those.
 */
export function toolJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const raw = z.toJSONSchema(io === 'output' ? shallowZod(schema, 0) : schema, { target: 'draft-7', io }) as Node;
  delete raw.$schema;
  const tidy = walk(raw, io);
  return (io === 'output' ? shallow(tidy, 0) : tidy) as Record<string, unknown>;
}
