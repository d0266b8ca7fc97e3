/**
 * A tool's bad arguments as an answer the caller can act on: `{error, field, expected}`, where
 * `field` is the argument's path (`config.group_size`, `models[0]`) and `expected` says what the
 * tool's listed input schema accepts there, so a range gives both its bounds. A call with several
 * problems is answered with all of them (`problems`; `error` says each), unknown arguments first:
 * a misspelled argument is also a missing one.
 */
import type { z } from 'zod';

export interface ArgumentError {
  error: string;
  field: string;
  expected: string;
}

/** A refusal: the first problem's field and expected, every problem in `error`, and the list when there are several. */
export type Refusal = ArgumentError & { problems?: ArgumentError[] };

type Path = ReadonlyArray<PropertyKey>;
/** The JSON Schema `tools/list` shows for the input (see jsonSchema.ts). */
export type Schema = { [key: string]: unknown };

/** An answer must not grow with its input (a 1 MB argument name): inputs are echoed by their start. */
const ECHO_CHARS = 100;

/** `text` as an answer echoes it: whole up to ECHO_CHARS, else its start and its length. */
export function echoed(text: string): string {
  return text.length <= ECHO_CHARS ? text : `${text.slice(0, ECHO_CHARS)}... (${text.length} characters)`;
}

export function fieldPath(path: Path): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : `${out === '' ? '' : '.'}${echoed(String(key))}`;
  return out;
}

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

/** " between 1 and 500" for values; " of 1 to 8 items" for sizes. */
function bounds(min: number | undefined, max: number | undefined, unit?: string): string {
  if (min === undefined && max === undefined) return '';
  if (unit === undefined) {
    if (min !== undefined && max !== undefined) return ` between ${min} and ${max}`;
    return min !== undefined ? ` of at least ${min}` : ` of at most ${max}`;
  }
  if (min !== undefined && max !== undefined) return min === max ? ` of exactly ${min} ${unit}` : ` of ${min} to ${max} ${unit}`;
  return min !== undefined ? ` of at least ${min} ${unit}` : ` of at most ${max} ${unit}`;
}

/** What a schema accepts, in a few words: "integer between 1 and 500", "one of: running, step, ended". */
export function describeSchema(schema: Schema): string {
  if (Array.isArray(schema.enum)) return `one of: ${schema.enum.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`;
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) return schema.anyOf.filter(isSchema).map(describeSchema).join(' or ');
  switch (schema.type) {
    case 'string': {
      const pattern = typeof schema.pattern === 'string' ? ` matching /${schema.pattern}/` : '';
      return `string${bounds(num(schema.minLength), num(schema.maxLength), 'characters')}${pattern}`;
    }
    case 'integer':
    case 'number':
      return `${schema.type}${bounds(num(schema.minimum), num(schema.maximum))}`;
    case 'boolean':
      return 'true or false';
    case 'null':
      return 'null';
    case 'array':
      return `array${bounds(num(schema.minItems), num(schema.maxItems), 'items')}${isSchema(schema.items) ? ` of ${describeSchema(schema.items)}` : ''}`;
    case 'object': {
      if (isSchema(schema.properties)) return `object with: ${Object.keys(schema.properties).join(', ')}`;
      return isSchema(schema.additionalProperties) ? `object of name -> ${describeSchema(schema.additionalProperties)}` : 'object';
    }
    default:
      return 'a JSON value';
  }
}

/** The schema a path leads to, or undefined past what the schema describes. */
export function schemaAt(root: Schema, path: Path): Schema | undefined {
  let at: Schema | undefined = root;
  for (const key of path) {
    if (at === undefined) return undefined;
    // A nullable field is anyOf [the field, null]: follow the branch that can hold a key.
    const holder: Schema | undefined = Array.isArray(at.anyOf) ? at.anyOf.filter(isSchema).find((b) => b.type === 'object' || b.type === 'array') : at;
    if (holder === undefined) return undefined;
    if (typeof key === 'number') at = isSchema(holder.items) ? holder.items : undefined;
    else if (isSchema(holder.properties)) at = isSchema(holder.properties[key as string]) ? (holder.properties[key as string] as Schema) : undefined;
    else at = isSchema(holder.additionalProperties) ? holder.additionalProperties : undefined;
  }
  return at;
}

function unknownArgument(root: Schema, issue: z.core.$ZodIssueUnrecognizedKeys): ArgumentError {
  const holder = schemaAt(root, issue.path);
  const names = holder && isSchema(holder.properties) ? Object.keys(holder.properties) : [];
  const expected = names.length > 0 ? `one of the accepted arguments: ${names.join(', ')}` : 'no arguments';
  const more = issue.keys.length > 3 ? ` (and ${issue.keys.length - 3} more)` : '';
  return { error: `Unknown argument '${issue.keys.slice(0, 3).map(echoed).join("', '")}'${more}: this tool does not take it.`, field: fieldPath([...issue.path, issue.keys[0]!]), expected };
}

/** An array under its minimum: with a minimum of 1 it is empty, which is said as such (`steps: []`). */
const fewItems = (min: number): string => (min === 1 ? 'it is empty; give at least 1 item or leave it out' : `it has fewer than ${min} items`);

/** The value at `path` in the arguments, undefined where there is none. */
function valueAt(input: unknown, path: Path): unknown {
  let at = input;
  for (const key of path) at = typeof at === 'object' && at !== null ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  return at;
}

/** One issue of a failed parse, as the caller reads it; `root` is the input's JSON Schema, `input` the arguments given. */
function issueError(root: Schema, issue: z.core.$ZodIssue, input: unknown): ArgumentError {
  if (issue.code === 'unrecognized_keys') return unknownArgument(root, issue);
  const field = fieldPath(issue.path);
  const name = field || '(arguments)';
  if (issue.code === 'invalid_key') {
    const record = schemaAt(root, issue.path.slice(0, -1));
    const keys = record && isSchema(record.propertyNames) ? describeSchema(record.propertyNames) : 'string';
    return { error: `Invalid argument '${name}': the name is not a ${keys}.`, field, expected: `a name that is a ${keys}` };
  }
  const at = schemaAt(root, issue.path);
  const expected = at ? describeSchema(at) : issue.message;
  // An argument not given is said as missing, whatever zod's own text calls it (a missing enum reads
  // "Invalid option"); a schema's own message for it says more and stands.
  const missing = issue.path.length > 0 && valueAt(input, issue.path) === undefined && /^Invalid (input|option)\b/.test(issue.message);
  // zod's own text for a union no member accepts is a bare "Invalid input"; a schema's own message says more.
  const what = missing ? 'it is required' : issue.code === 'too_small' && issue.origin === 'array' ? fewItems(Number(issue.minimum)) : issue.message === 'Invalid input' ? `not ${expected}` : issue.message;
  return { error: `Invalid argument '${name}': ${what}.`, field, expected };
}

/** Every issue of a failed parse, unknown arguments first. */
export function argumentProblems(root: Schema, issues: readonly z.core.$ZodIssue[], input: unknown): ArgumentError[] {
  const ordered = [...issues.filter((i) => i.code === 'unrecognized_keys'), ...issues.filter((i) => i.code !== 'unrecognized_keys')];
  return ordered.map((issue) => issueError(root, issue, input));
}

/** The answer to a call with these problems (at least one). */
export function refusal(problems: readonly ArgumentError[]): Refusal {
  const first = problems[0]!;
  if (problems.length === 1) return first;
  return { error: `${problems.length} problems with the arguments: ${problems.map((p) => p.error).join(' ')}`, field: first.field, expected: first.expected, problems: [...problems] };
}

/** The answer to a failed parse, every issue in it; `root` is the input's JSON Schema. */
export function argumentError(root: Schema, issues: readonly z.core.$ZodIssue[], input: unknown): Refusal {
  return refusal(argumentProblems(root, issues, input));
}

/**
 * A tool whose calls come in modes (an `action`; or naming an earlier job by its id instead of
 * starting one): the arguments each mode reads beyond those every mode reads. An argument given to
 * a mode that does not read it is refused, naming what that mode reads, never silently ignored.
 */
export interface ArgumentModes {
  /** The mode the given arguments pick, and how a refusal names it; undefined when they pick none (the schema says why). */
  pick(args: Record<string, unknown>): { mode: string; named: string } | undefined;
  reads: Readonly<Record<string, readonly string[]>>;
}

/** Modes picked by the value of `action`. */
export function modesByAction(reads: Record<string, readonly string[]>): ArgumentModes {
  return { reads, pick: (args) => (typeof args.action === 'string' && Object.hasOwn(reads, args.action) ? { mode: args.action, named: `to action '${args.action}'` } : undefined) };
}

/**
 * Two modes: naming a job started earlier by `id` (it reads only the arguments every call reads),
 * or starting one (every other argument of `input`).
 */
export function modesById(input: z.ZodObject, id: string, everyCallReads: readonly string[]): ArgumentModes {
  const starting = Object.keys(input.shape).filter((name) => name !== id && !everyCallReads.includes(name));
  return { reads: { named: [], start: starting }, pick: (args) => (args[id] !== undefined ? { mode: 'named', named: `with ${id} (it reads ${[id, ...everyCallReads].join(', ')})` } : { mode: 'start', named: 'here' }) };
}

/** The given arguments the picked mode does not read. */
export function inapplicableArguments(modes: ArgumentModes, args: Record<string, unknown>): ArgumentError[] {
  const picked = modes.pick(args);
  if (picked === undefined) return [];
  const reads = modes.reads[picked.mode] ?? [];
  const modal = new Set(Object.values(modes.reads).flat());
  return Object.keys(args)
    .filter((name) => args[name] !== undefined && modal.has(name) && !reads.includes(name))
    .map((name) => ({
      error: `Argument '${name}' does not apply ${picked.named}${reads.length > 0 ? `, which reads ${reads.join(', ')}` : ''}: leave it out.`,
      field: name,
      expected: reads.length > 0 ? `for this call, one of: ${reads.join(', ')}` : 'no such argument in this call',
    }));
}
