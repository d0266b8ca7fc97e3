/**
 * A setting that still holds a variable reference (`${TINKER_API_KEY}`, `$HOME/x`): the client
 * that starts the server passed it through unexpanded (Hermes keeps an unset `${VAR}` as literal
 * text; Claude Desktop expands nothing). Used as a key or a path it would fail far from its cause.
 */
const REFERENCE = /\$\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\}|^\$[A-Za-z_][A-Za-z0-9_]*/;

/** The unexpanded reference in `value`, if any. */
export function unexpandedReference(value: string | undefined): string | undefined {
  return value === undefined ? undefined : REFERENCE.exec(value)?.[0];
}

/** The whole value is one reference: no secret in it, so it need not (and must not) be redacted from the message about it. */
export function isWholePlaceholder(value: string): boolean {
  return unexpandedReference(value.trim()) === value.trim();
}

/** What a person should be told about setting `name` holding `reference` literally. */
export function placeholderMessage(name: string, reference: string): string {
  return (
    `${name} holds the text ${reference}, not a value: the MCP client passed a variable it did not expand ` +
    '(Hermes keeps an unset ${VAR} as literal text; Claude Desktop expands no variables). Put the value itself in the env block of the ' +
    `client config, or export ${reference.replace(/^\$\{?([A-Za-z_][A-Za-z0-9_]*).*$/, '$1')} in the shell that starts the client, then restart the server.`
  );
}
