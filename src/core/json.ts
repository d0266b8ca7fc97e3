/** JSON values as they cross the wire, files and the Python helpers. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
