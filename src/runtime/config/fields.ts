/**
 * Config field descriptors and the validation of edited values against them. Hermes stored any
 * value verbatim (a string "32" reached the YAML as a string); here every value is coerced to the
 * field's type and checked against its bounds, and a refusal says what would be accepted.
 */
import type { JsonValue } from '../../core/json.js';

export type ScalarKind = 'int' | 'float' | 'bool' | 'str';
export type FieldKind = ScalarKind | 'enum' | 'list' | 'dict' | 'any';

export interface FieldInfo {
  name: string;
  /** As Python spells it: `int`, `Optional[int]`, `List[str]`, `EvalHandlingEnum`. */
  type: string;
  kind: FieldKind;
  nullable: boolean;
  /** Allowed values (an Enum's `.value`s, a Literal's values, or a known closed set of strings). */
  enum?: Array<string | number>;
  /** The Enum member names, parallel to `enum`: both are accepted as input. */
  enumNames?: string[];
  /** Element kind of a list, value kind of a dict, when the annotation says. */
  items?: ScalarKind;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  /** Values with a special meaning accepted outside the bounds, e.g. -1 = "no limit". */
  sentinels?: number[];
  default: JsonValue;
  description: string;
}

/** Why a value does not fit a field; the caller adds `expectedText(field)`. */
export class FieldValueError extends Error {}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);
const NULL_WORDS = new Set(['null', 'none']);
const INTEGER_TEXT = /^[+-]?\d+$/;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

function show(value: JsonValue): string {
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function coerceScalar(kind: ScalarKind, value: JsonValue): JsonValue {
  switch (kind) {
    case 'int': {
      const n = typeof value === 'string' && INTEGER_TEXT.test(value.trim()) ? Number(value.trim()) : value;
      if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
      throw new FieldValueError(`${show(value)} is not an integer`);
    }
    case 'float': {
      const n = typeof value === 'string' && NUMBER_TEXT.test(value.trim()) ? Number(value.trim()) : value;
      if (typeof n === 'number' && Number.isFinite(n)) return n;
      throw new FieldValueError(`${show(value)} is not a number`);
    }
    case 'bool': {
      if (typeof value === 'boolean') return value;
      const word = typeof value === 'string' ? value.trim().toLowerCase() : typeof value === 'number' ? String(value) : undefined;
      if (word !== undefined && TRUE_WORDS.has(word)) return true;
      if (word !== undefined && FALSE_WORDS.has(word)) return false;
      throw new FieldValueError(`${show(value)} is not a boolean`);
    }
    case 'str':
      if (typeof value === 'string') return value;
      // A name like 2024 typed as a number is still meant as text; true/[]/{} are mistakes.
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      throw new FieldValueError(`${show(value)} is not a string`);
  }
}

function matchEnum(field: FieldInfo, value: JsonValue): string | number {
  const options = field.enum ?? [];
  const exact = options.find((o) => o === value);
  if (exact !== undefined) return exact;
  if (typeof value === 'string' || typeof value === 'number') {
    const wanted = String(value).trim().toLowerCase();
    const index = options.findIndex((o, i) => String(o).toLowerCase() === wanted || field.enumNames?.[i]?.toLowerCase() === wanted);
    if (index >= 0) return options[index]!;
  }
  throw new FieldValueError(`${show(value)} is not one of the allowed values`);
}

/** Arrays and objects may also come as their JSON text (agents often quote them). */
function parseContainer(value: JsonValue, kind: 'list' | 'dict'): JsonValue {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as JsonValue;
  } catch {
    throw new FieldValueError(`${show(value)} is not a JSON ${kind === 'list' ? 'array' : 'object'}`);
  }
}

function coerceList(field: FieldInfo, raw: JsonValue): JsonValue[] {
  const value = parseContainer(raw, 'list');
  if (!Array.isArray(value)) throw new FieldValueError(`${show(raw)} is not a JSON array`);
  const items = field.items;
  if (!items) return value;
  return value.map((item, i) => {
    try {
      return coerceScalar(items, item);
    } catch (err) {
      throw new FieldValueError(`item ${i}: ${(err as Error).message}`);
    }
  });
}

function coerceDict(field: FieldInfo, raw: JsonValue): { [key: string]: JsonValue } {
  const value = parseContainer(raw, 'dict');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FieldValueError(`${show(raw)} is not a JSON object`);
  const items = field.items;
  if (!items) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      try {
        return [key, coerceScalar(items, item)];
      } catch (err) {
        throw new FieldValueError(`key ${JSON.stringify(key)}: ${(err as Error).message}`);
      }
    }),
  );
}

function checkBounds(field: FieldInfo, n: number): void {
  if (field.sentinels?.includes(n)) return;
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = field;
  const fits =
    (minimum === undefined || n >= minimum) &&
    (maximum === undefined || n <= maximum) &&
    (exclusiveMinimum === undefined || n > exclusiveMinimum) &&
    (exclusiveMaximum === undefined || n < exclusiveMaximum);
  if (!fits) throw new FieldValueError(`${n} is out of range`);
}

/** The value to store for `field`, or FieldValueError. `null` (or "null"/"none") unsets an Optional field. */
export function coerceFieldValue(field: FieldInfo, value: JsonValue): JsonValue {
  // "None" is a member of some enums (EvalHandlingEnum.NONE, reasoning_effort "none"): a value there.
  const nullWord = typeof value === 'string' && field.kind !== 'str' && !field.enum && NULL_WORDS.has(value.trim().toLowerCase());
  if (value === null || (nullWord && field.nullable)) {
    if (field.nullable || field.kind === 'any') return null;
    throw new FieldValueError('null is not allowed: the field is not Optional');
  }
  if (field.enum && (field.kind === 'enum' || field.kind === 'str')) return matchEnum(field, value);
  switch (field.kind) {
    case 'int':
    case 'float': {
      const n = coerceScalar(field.kind, value) as number;
      checkBounds(field, n);
      return n;
    }
    case 'bool':
    case 'str':
      return coerceScalar(field.kind, value);
    case 'list':
      return coerceList(field, value);
    case 'dict':
      return coerceDict(field, value);
    case 'enum':
    case 'any':
      return value;
  }
}

/** `1..6`, `>= 1`, `-1 or >= 1`, `> 0`; undefined when the field has no bounds. */
export function rangeText(field: FieldInfo): string | undefined {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = field;
  let range: string | undefined;
  if (minimum !== undefined && maximum !== undefined) range = `${minimum}..${maximum}`;
  else {
    const parts = [
      minimum !== undefined ? `>= ${minimum}` : exclusiveMinimum !== undefined ? `> ${exclusiveMinimum}` : undefined,
      maximum !== undefined ? `<= ${maximum}` : exclusiveMaximum !== undefined ? `< ${exclusiveMaximum}` : undefined,
    ].filter((p): p is string => p !== undefined);
    if (parts.length > 0) range = parts.join(' and ');
  }
  if (range === undefined) return undefined;
  return field.sentinels?.length ? `${field.sentinels.join(' or ')} or ${range}` : range;
}

/** The closed set or range a field accepts beyond its type, for listings; undefined when none. */
export function allowedText(field: FieldInfo): string | undefined {
  if (field.enum) return `one of ${field.enum.join(', ')}`;
  return rangeText(field);
}

const KIND_TEXT: Record<FieldKind, string> = {
  int: 'an integer',
  float: 'a number',
  bool: 'true or false',
  str: 'a string',
  enum: 'one of the allowed values',
  list: 'a JSON array',
  dict: 'a JSON object',
  any: 'any JSON value',
};

/** What `coerceFieldValue` accepts, e.g. `Optional[int]: an integer 1024..32000, or null to unset`. */
export function expectedText(field: FieldInfo): string {
  let text = field.enum ? `one of ${field.enum.join(', ')}` : KIND_TEXT[field.kind];
  const range = field.enum ? undefined : rangeText(field);
  if (range) text += ` ${range}`;
  if (field.items && field.kind === 'list') text += ` of ${field.items} items`;
  if (field.items && field.kind === 'dict') text += ` with ${field.items} values`;
  if (field.nullable) text += ', or null to unset';
  return `${field.type}: ${text}`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The known name a mistyped one most likely meant (`groupsize`, `Group-Size` -> `group_size`). */
export function closestName(input: string, names: readonly string[]): string | undefined {
  const normal = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  const wanted = normal(input);
  if (wanted === '') return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(wanted, normal(name));
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(wanted.length / 4)) ? best.name : undefined;
}
