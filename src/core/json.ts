/** JSON values as they cross the wire, files and the Python helpers. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * `value` as an answer shows it: itself while its JSON is at most `maxChars` long, else the start
 * of its text with "..." (a config value can be a long list; the answer stays readable).
 */
export function previewJson(value: JsonValue, maxChars: number): JsonValue {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length <= maxChars ? value : `${text.slice(0, maxChars - 3)}...`;
}

/** previewJson() of every value of a record. */
export function previewValues(values: Record<string, JsonValue>, maxChars: number): Record<string, JsonValue> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, previewJson(v, maxChars)]));
}
