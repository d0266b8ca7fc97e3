/**
 * W&B writes summaries and history lines with Python's json, which emits bare `NaN`, `Infinity`
 * and `-Infinity` (and the server keeps raw control characters in strings): `JSON.parse` rejects
 * both. Inside its JSON-typed GraphQL fields the same values travel as the strings "NaN" etc.
 *
 * Decision: outside this module a non-finite number is the string "NaN" / "Infinity" /
 * "-Infinity". Both wire forms end up the same, the value stays JSON-safe (structuredContent), and
 * an agent still sees that a loss went NaN instead of a null that reads as "not logged".
 */
import type { JsonValue } from '../../core/json.js';

export type NonFiniteName = 'NaN' | 'Infinity' | '-Infinity';
/** A logged scalar as we hand it out: a finite number, a non-finite one by name, or absent. */
export type MetricNumber = number | NonFiniteName | null;

const NON_FINITE: ReadonlySet<string> = new Set<NonFiniteName>(['NaN', 'Infinity', '-Infinity']);
const BARE_TOKENS = ['-Infinity', 'Infinity', 'NaN'] as const;

/**
 * JSON.parse that also accepts bare NaN/Infinity/-Infinity outside string literals and raw
 * control characters inside them (Python's `json.loads(strict=False)`). Non-finite values come
 * back as their names, so the result is plain JSON.
 */
export function parseTolerantJson(text: string): JsonValue {
  let out = '';
  let inString = false;
  let chunkStart = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === '\\') {
        i++;
      } else if (ch === '"') {
        inString = false;
      } else if (ch < ' ') {
        out += text.slice(chunkStart, i) + `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
        chunkStart = i + 1;
      }
      continue;
    }
    if (ch === '"') {
      inString = true;
      continue;
    }
    const token = BARE_TOKENS.find((t) => text.startsWith(t, i));
    if (token) {
      out += text.slice(chunkStart, i) + `"${token}"`;
      i += token.length - 1;
      chunkStart = i + 1;
    }
  }
  // Numbers too large for a double (1e999) parse to Infinity: name them like the bare tokens.
  return JSON.parse(out + text.slice(chunkStart), (_key, value: unknown) =>
    typeof value === 'number' && !Number.isFinite(value) ? String(value) : value,
  ) as JsonValue;
}

/** A JSONString field (summaryMetrics, config): null or unparseable means empty, like the SDK. */
export function parseJsonObjectField(value: unknown): Record<string, JsonValue> {
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = parseTolerantJson(value);
    } catch {
      return {};
    }
  }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, JsonValue>) : {};
}

/** A logged value as a metric: numbers and non-finite names pass, anything else is absent. */
export function asMetricNumber(value: unknown): MetricNumber {
  if (typeof value === 'number') return Number.isFinite(value) ? value : (String(value) as NonFiniteName);
  if (typeof value === 'string' && NON_FINITE.has(value)) return value as NonFiniteName;
  return null;
}
