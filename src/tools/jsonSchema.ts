/**
 * A tool's zod schema as the JSON Schema `tools/list` sends, read from the schema's definition in
 * one pass. It is written for the dialect clients read (portable to those that map schemas onto
 * a single-`type` dialect: Gemini-style function declarations, the Inspector's `--strict` lint), and
 * for the zod kinds the tools use: any other kind, check or metadata is an error, met by the tests
 * that list the tools, not a schema quietly wrong. `z.toJSONSchema` converts anything for any target,
 * and for these tools allocated about 6 MB on the first `tools/list`: most of what the server's
 * memory rose by after start (docs/architecture.md, "Build and serving").
 */
import * as z from 'zod';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Node = { [key: string]: Json };
type Io = 'input' | 'output';

interface Def {
  type: string;
  /** Set when the schema is itself a check: zod's int is a number checked as a safe integer. */
  check?: string;
  checks?: { _zod: { def: CheckDef } }[];
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  innerType?: z.ZodType;
  entries?: Record<string, string | number>;
  values?: unknown[];
  defaultValue?: unknown;
  /** A record over an enum whose keys may be missing (z.partialRecord). */
  partial?: boolean;
  /** false: a union of which exactly one option may match (z.xor). */
  inclusive?: boolean;
}

interface CheckDef {
  check: string;
  value?: number;
  inclusive?: boolean;
  minimum?: number;
  maximum?: number;
  format?: string;
  pattern?: RegExp;
}

const defOf = (schema: z.ZodType): Def => schema.def as unknown as Def;
const internals = (schema: z.ZodType): { optin?: string; optout?: string } => (schema as unknown as { _zod: { optin?: string; optout?: string } })._zod;

/** Wrappers that add nothing a client reads but a default: their inner schema is the node. */
const WRAPPERS = new Set(['optional', 'default', 'readonly']);
/** Checks that change no JSON Schema keyword: refinements and transforms (trim). */
const UNSEEN_CHECKS = new Set(['custom', 'overwrite']);

function unsupported(what: string): never {
  throw new Error(`src/tools/jsonSchema.ts does not convert ${what}: add it there, or use a kind it converts`);
}

/** The description, and nothing else, is the metadata a tool schema carries. */
function described(schema: z.ZodType): string | undefined {
  const meta = z.globalRegistry.get(schema);
  if (meta === undefined) return undefined;
  for (const key of Object.keys(meta)) if (key !== 'description') unsupported(`the metadata '${key}'`);
  return meta.description;
}

/** Bounds and patterns from the checks, narrowed as zod narrows them (the tightest wins). */
function bounds(schema: z.ZodType): { min?: number; exMin?: number; max?: number; exMax?: number; integer: boolean; pattern?: string } {
  const out: ReturnType<typeof bounds> = { integer: false };
  const atLeast = (key: 'min' | 'exMin', value: number): void => {
    out[key] = Math.max(value, out[key] ?? -Infinity);
  };
  const atMost = (key: 'max' | 'exMax', value: number): void => {
    out[key] = Math.min(value, out[key] ?? Infinity);
  };
  const def = defOf(schema);
  for (const c of [...(def.check === undefined ? [] : [def as CheckDef]), ...(def.checks ?? []).map((check) => check._zod.def)]) {
    if (c.check === 'greater_than') atLeast(c.inclusive ? 'min' : 'exMin', c.value!);
    else if (c.check === 'less_than') atMost(c.inclusive ? 'max' : 'exMax', c.value!);
    else if (c.check === 'min_length') atLeast('min', c.minimum!);
    else if (c.check === 'max_length') atMost('max', c.maximum!);
    // Any JSON integer a client sends is within the safe range: only the type says something.
    else if (c.check === 'number_format' && c.format === 'safeint') out.integer = true;
    else if (c.check === 'string_format' && c.format === 'regex' && out.pattern === undefined) out.pattern = c.pattern!.source;
    else if (c.check === 'string_format' && c.format === 'regex') unsupported('a second pattern');
    else if (!UNSEEN_CHECKS.has(c.check)) unsupported(`the check '${c.check}${c.format ? `: ${c.format}` : ''}'`);
  }
  return out;
}

function numberNode(schema: z.ZodType): Node {
  const b = bounds(schema);
  const node: Node = { type: b.integer ? 'integer' : 'number' };
  if (b.exMin !== undefined && b.exMin >= (b.min ?? -Infinity)) node.exclusiveMinimum = b.exMin;
  else if (b.min !== undefined) node.minimum = b.min;
  if (b.exMax !== undefined && b.exMax <= (b.max ?? Infinity)) node.exclusiveMaximum = b.exMax;
  else if (b.max !== undefined) node.maximum = b.max;
  return node;
}

function stringNode(schema: z.ZodType): Node {
  const b = bounds(schema);
  const node: Node = { type: 'string' };
  if (b.min !== undefined) node.minLength = b.min;
  if (b.max !== undefined) node.maxLength = b.max;
  if (b.pattern !== undefined) node.pattern = b.pattern;
  return node;
}

/** The JSON type all `values` share, if they share one. */
function typeOfValues(values: readonly Json[]): Json | undefined {
  const types = new Set(values.map((v) => (v === null ? 'null' : typeof v)));
  return types.size === 1 ? [...types][0]! : undefined;
}

/** zod's enum values: a numeric TypeScript enum maps names to numbers and numbers back to names. */
function enumValues(entries: Record<string, string | number>): Json[] {
  const numbers = Object.values(entries).filter((v) => typeof v === 'number');
  return Object.entries(entries)
    .filter(([key]) => !numbers.includes(Number(key)))
    .map(([, value]) => value);
}

/**
 * How deep an output schema spells its structure: the answer's fields and the fields of those
 * are typed and described; anything deeper is its type(s), values and description alone. SDK
 * clients compile every output schema on each listTools, at a cost that follows its size
 * (about half with this depth; docs/architecture.md, "Build and serving"), and the server
 * checks every answer against the full zod schema before sending it.
 */
const OUTPUT_DEPTH = 1;

interface Walk {
  io: Io;
  /** Output schemas only: how deep this node is; past OUTPUT_DEPTH a child is summarized. */
  level?: number;
}

/** A child `step` levels below: converted whole, or (an output past OUTPUT_DEPTH) summarized. */
function child(schema: z.ZodType, walk: Walk, step: number): Node {
  if (walk.level === undefined) return convert(schema, walk);
  return walk.level < OUTPUT_DEPTH ? convert(schema, { io: walk.io, level: walk.level + step }) : summary(schema, walk.io);
}

function objectNode(def: Def, walk: Walk): Node {
  const properties: Node = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(def.shape!)) {
    properties[name] = child(field, walk, 1);
    // Input: a default makes a field optional to the caller; output: the answer always has it.
    if ((walk.io === 'input' ? internals(field).optin : internals(field).optout) === undefined) required.push(name);
  }
  const node: Node = { type: 'object', properties };
  if (required.length > 0) node.required = required;
  const rest = def.catchall === undefined ? undefined : defOf(def.catchall).type;
  // Closed inputs tell a caller no other argument exists; an answer may gain fields without
  // breaking a client that validates it, and the schema is shorter.
  if (rest === 'never') {
    if (walk.io === 'input') node.additionalProperties = false;
  } else if (rest !== undefined) {
    const values = child(def.catchall!, walk, 1);
    node.additionalProperties = Object.keys(values).length === 0 ? true : values;
  }
  return node;
}

function recordNode(def: Def, walk: Walk): Node {
  const node: Node = { type: 'object' };
  const keys = convert(def.keyType!, { io: walk.io });
  // JSON object keys are strings already: only a narrower key says something.
  if (!(Object.keys(keys).length === 1 && keys.type === 'string')) node.propertyNames = keys;
  const values = child(def.valueType!, walk, 1);
  // `{}` (any value) is the keyword's meaning when it says nothing.
  node.additionalProperties = Object.keys(values).length === 0 ? true : values;
  const keyDef = defOf(def.keyType!);
  // A record over an enum has every key, unless it is partial or (to a caller) its values may be left out.
  if (keyDef.type === 'enum' && !def.partial && !(walk.io === 'input' && internals(def.valueType!).optin !== undefined)) node.required = enumValues(keyDef.entries!).map(String);
  return node;
}

function tupleNode(def: Def, walk: Walk): Node {
  const items = def.items!.map((item) => convert(item, { io: walk.io }));
  const node: Node = { type: 'array', items };
  if (def.rest) unsupported('a tuple with a rest element');
  node.additionalItems = false;
  const optional = (item: z.ZodType): boolean => (walk.io === 'input' ? internals(item).optin !== undefined : internals(item).optout === 'optional');
  const firstOptional = def.items!.findIndex(optional);
  node.minItems = firstOptional === -1 ? def.items!.length : firstOptional;
  node.maxItems = def.items!.length;
  return node;
}

/** The node of one schema, wrappers and all; its description and default included. */
function convert(schema: z.ZodType, walk: Walk): Node {
  const def = defOf(schema);
  const description = described(schema);
  let node: Node;
  if (WRAPPERS.has(def.type)) {
    node = convert(def.innerType!, walk);
    if (def.type === 'default') node.default = JSON.parse(JSON.stringify(def.defaultValue)) as Json;
  } else if (def.type === 'nullable') {
    node = { anyOf: [convert(def.innerType!, walk), { type: 'null' }] };
  } else if (def.type === 'union') {
    if (def.inclusive === false) unsupported('an exclusive union');
    node = { anyOf: def.options!.map((option) => convert(option, walk)) };
  } else if (def.type === 'object') node = objectNode(def, walk);
  else if (def.type === 'record') node = recordNode(def, walk);
  else if (def.type === 'array') {
    const b = bounds(schema);
    node = { type: 'array' };
    const items = child(def.element!, walk, 0);
    // An array of anything says nothing of its items.
    if (Object.keys(items).length > 0) node.items = items;
    if (b.min !== undefined) node.minItems = b.min;
    if (b.max !== undefined) node.maxItems = b.max;
  } else if (def.type === 'tuple') node = tupleNode(def, walk);
  else if (def.type === 'string') node = stringNode(schema);
  else if (def.type === 'number') node = numberNode(schema);
  else if (def.type === 'boolean') node = { type: 'boolean' };
  else if (def.type === 'null') node = { type: 'null' };
  else if (def.type === 'unknown' || def.type === 'any') node = {};
  else if (def.type === 'enum') {
    const values = enumValues(def.entries!);
    const type = typeOfValues(values);
    node = { ...(type === 'string' || type === 'number' ? { type } : {}), enum: values };
  } else if (def.type === 'literal') {
    const values = def.values as Json[];
    if (values.some((v) => v === undefined || typeof v === 'bigint')) unsupported('an undefined or bigint literal');
    const type = typeOfValues(values);
    node = values.length === 1 ? { type: type!, const: values[0]! } : { ...(type !== undefined ? { type } : {}), enum: values };
  } else unsupported(`the kind '${def.type}'`);
  // An outer description (a wrapper's) names the field; it is the one shown.
  if (description !== undefined) node.description = description;
  return node;
}

/** The single JSON type of a schema's values, wrappers aside; undefined for a union, a nullable or anything. */
function typeOf(schema: z.ZodType): Json | undefined {
  const def = defOf(schema);
  if (WRAPPERS.has(def.type)) return typeOf(def.innerType!);
  if (def.type === 'object' || def.type === 'record') return 'object';
  if (def.type === 'array' || def.type === 'tuple') return 'array';
  if (def.type === 'number') return bounds(schema).integer ? 'integer' : 'number';
  if (def.type === 'string' || def.type === 'boolean' || def.type === 'null') return def.type;
  if (def.type === 'enum') return typeOfValues(enumValues(def.entries!));
  if (def.type === 'literal') return typeOfValues(def.values as Json[]);
  return undefined;
}

/** A node cut to what a client needs to accept it and a reader to know it: type(s), values, description. */
function summary(schema: z.ZodType, io: Io): Node {
  let inner = schema;
  let description = described(schema);
  while (WRAPPERS.has(defOf(inner).type)) {
    inner = defOf(inner).innerType!;
    description ??= described(inner);
  }
  const def = defOf(inner);
  const branch = (option: z.ZodType): Node => {
    const type = typeOf(option);
    return type === undefined ? {} : { type };
  };
  const node: Node = {};
  const type = typeOf(inner);
  if (type !== undefined) node.type = type;
  if (def.type === 'nullable') node.anyOf = [branch(def.innerType!), { type: 'null' }];
  else if (def.type === 'union') node.anyOf = def.options!.map(branch);
  else if (def.type === 'enum' || (def.type === 'literal' && def.values!.length > 1)) node.enum = convert(inner, { io }).enum!;
  if (description !== undefined) node.description = description;
  return node;
}

/**
 * The JSON Schema of a tool's input (`io: 'input'`: defaults make fields optional) or output. No
 * `$schema`: these schemas use only keywords draft-07 and 2020-12 read alike, and a client assumes
 * one of those.
 */
export function toolJsonSchema(schema: z.ZodType, io: Io): Record<string, unknown> {
  return convert(schema, io === 'output' ? { io, level: 0 } : { io });
}
