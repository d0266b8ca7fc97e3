/**
 * Just enough GraphQL for the fake W&B server to behave like a real one towards our client:
 * parse the document (fields, aliases, arguments skipped, fragments, inline fragments), validate
 * every selected field against the slice of W&B's schema the reference documents (so a client
 * asking for `summary`, or sub-selecting the `sampledHistory` JSON scalar, fails as it would on
 * api.wandb.ai), and project the handler's full objects down to what was selected.
 */

export type Selection =
  | { kind: 'field'; alias: string; name: string; selections?: Selection[] }
  | { kind: 'spread'; fragment: string }
  | { kind: 'inline'; typeCondition?: string; selections: Selection[] };

export interface ParsedDocument {
  operation: { type: string; name?: string; selections: Selection[] };
  fragments: Map<string, { on: string; selections: Selection[] }>;
}

export class GraphQLSyntaxError extends Error {}

const SCALARS = new Set(['ID', 'String', 'Int', 'Int64', 'Float', 'Boolean', 'JSON', 'JSONString', 'DateTime']);

/** Field -> type name, lists flattened (types from the wandb SDK's generated models). */
const SCHEMA: Record<string, Record<string, string>> = {
  Query: { viewer: 'User', project: 'Project' },
  User: { id: 'ID', entity: 'String', name: 'String', username: 'String', email: 'String' },
  Project: { id: 'ID', name: 'String', entityName: 'String', internalId: 'ID', readOnly: 'Boolean', runCount: 'Int', runs: 'RunConnection', run: 'Run' },
  RunConnection: { totalCount: 'Int', edges: 'RunEdge', pageInfo: 'PageInfo' },
  RunEdge: { node: 'Run', cursor: 'String' },
  PageInfo: { startCursor: 'String', endCursor: 'String', hasNextPage: 'Boolean', hasPreviousPage: 'Boolean' },
  Run: {
    id: 'ID',
    name: 'String',
    displayName: 'String',
    state: 'String',
    tags: 'String',
    group: 'String',
    jobType: 'String',
    sweepName: 'String',
    commit: 'String',
    readOnly: 'Boolean',
    createdAt: 'DateTime',
    heartbeatAt: 'DateTime',
    description: 'String',
    notes: 'String',
    config: 'JSONString',
    summaryMetrics: 'JSONString',
    systemMetrics: 'JSONString',
    historyKeys: 'JSON',
    historyLineCount: 'Int',
    projectId: 'ID',
    user: 'User',
    sampledHistory: 'JSON',
    history: 'String',
    events: 'String',
  },
};

const TOKEN = /\s+|,|#[^\n]*|\.\.\.|[{}()[\]:!$=@]|"(?:[^"\\\n]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|[_A-Za-z]\w*/y;

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) throw new GraphQLSyntaxError(`Syntax Error: Unexpected character "${text[at]}" at offset ${at}.`);
    const t = m[0];
    if (!/^\s|^,|^#/.test(t)) tokens.push(t);
  }
  return tokens;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: string[]) {}

  private peek(offset = 0): string | undefined {
    return this.tokens[this.pos + offset];
  }

  private next(): string {
    const t = this.tokens[this.pos++];
    if (t === undefined) throw new GraphQLSyntaxError('Syntax Error: Unexpected <EOF>.');
    return t;
  }

  private expect(token: string): void {
    const t = this.next();
    if (t !== token) throw new GraphQLSyntaxError(`Syntax Error: Expected "${token}", found "${t}".`);
  }

  private name(): string {
    const t = this.next();
    if (!/^[_A-Za-z]\w*$/.test(t)) throw new GraphQLSyntaxError(`Syntax Error: Expected Name, found "${t}".`);
    return t;
  }

  /** Arguments and variable definitions: the fake reads variables, not literal arguments. */
  private skipBalanced(open: string, close: string): void {
    this.expect(open);
    for (let depth = 1; depth > 0; ) {
      const t = this.next();
      if (t === open) depth++;
      else if (t === close) depth--;
    }
  }

  private directives(): void {
    while (this.peek() === '@') {
      this.next();
      this.name();
      if (this.peek() === '(') this.skipBalanced('(', ')');
    }
  }

  document(): ParsedDocument {
    let operation: ParsedDocument['operation'] | undefined;
    const fragments: ParsedDocument['fragments'] = new Map();
    while (this.peek() !== undefined) {
      const t = this.peek()!;
      if (t === '{') {
        operation ??= { type: 'query', selections: this.selectionSet() };
      } else if (t === 'query' || t === 'mutation') {
        this.next();
        const name = this.peek() !== '(' && this.peek() !== '{' ? this.name() : undefined;
        if (this.peek() === '(') this.skipBalanced('(', ')');
        this.directives();
        operation ??= { type: t, name, selections: this.selectionSet() };
      } else if (t === 'fragment') {
        this.next();
        const name = this.name();
        if (this.name() !== 'on') throw new GraphQLSyntaxError('Syntax Error: Expected "on".');
        const on = this.name();
        this.directives();
        fragments.set(name, { on, selections: this.selectionSet() });
      } else {
        throw new GraphQLSyntaxError(`Syntax Error: Unexpected "${t}".`);
      }
    }
    if (!operation) throw new GraphQLSyntaxError('Syntax Error: no operation in the document.');
    return { operation, fragments };
  }

  private selectionSet(): Selection[] {
    this.expect('{');
    const selections: Selection[] = [];
    while (this.peek() !== '}') {
      if (this.peek() === '...') {
        this.next();
        if (this.peek() === 'on' || this.peek() === '{' || this.peek() === '@') {
          const typeCondition = this.peek() === 'on' ? (this.next(), this.name()) : undefined;
          this.directives();
          selections.push({ kind: 'inline', typeCondition, selections: this.selectionSet() });
        } else {
          selections.push({ kind: 'spread', fragment: this.name() });
          this.directives();
        }
        continue;
      }
      let name = this.name();
      let alias = name;
      if (this.peek() === ':') {
        this.next();
        name = this.name();
      }
      if (this.peek() === '(') this.skipBalanced('(', ')');
      this.directives();
      selections.push({ kind: 'field', alias, name, selections: this.peek() === '{' ? this.selectionSet() : undefined });
    }
    this.expect('}');
    if (selections.length === 0) throw new GraphQLSyntaxError('Syntax Error: Expected Name, found "}".');
    return selections;
  }
}

export function parseDocument(text: string): ParsedDocument {
  return new Parser(tokenize(text)).document();
}

/** Validation messages as graphql-js words them; empty when the document fits the schema. */
export function validate(doc: ParsedDocument): string[] {
  const errors: string[] = [];
  const walk = (selections: Selection[], type: string): void => {
    for (const sel of selections) {
      if (sel.kind === 'spread') {
        const fragment = doc.fragments.get(sel.fragment);
        if (!fragment) errors.push(`Unknown fragment "${sel.fragment}".`);
        else walk(fragment.selections, fragment.on);
      } else if (sel.kind === 'inline') {
        walk(sel.selections, sel.typeCondition ?? type);
      } else if (sel.name !== '__typename') {
        const fieldType = SCHEMA[type]?.[sel.name];
        if (fieldType === undefined) errors.push(`Cannot query field "${sel.name}" on type "${type}".`);
        else if (SCALARS.has(fieldType) && sel.selections) errors.push(`Field "${sel.name}" must not have a selection since type "${fieldType}" has no subfields.`);
        else if (!SCALARS.has(fieldType) && !sel.selections) errors.push(`Field "${sel.name}" of type "${fieldType}" must have a selection of subfields.`);
        else if (sel.selections) walk(sel.selections, fieldType);
      }
    }
  };
  walk(doc.operation.selections, 'Query');
  return errors;
}

/** Keeps only the selected fields (under their aliases) of a validated document's answer. */
export function project(doc: ParsedDocument, data: unknown): unknown {
  const walk = (value: unknown, selections: Selection[], type: string): unknown => {
    if (value === null || value === undefined) return null;
    if (Array.isArray(value)) return value.map((v) => walk(v, selections, type));
    const source = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const sel of selections) {
      if (sel.kind === 'spread') {
        const fragment = doc.fragments.get(sel.fragment)!;
        Object.assign(out, walk(value, fragment.selections, fragment.on));
      } else if (sel.kind === 'inline') {
        Object.assign(out, walk(value, sel.selections, sel.typeCondition ?? type));
      } else if (sel.name === '__typename') {
        out[sel.alias] = type;
      } else {
        const fieldType = SCHEMA[type]![sel.name]!;
        out[sel.alias] = sel.selections ? walk(source[sel.name], sel.selections, fieldType) : (source[sel.name] ?? null);
      }
    }
    return out;
  };
  return walk(data, doc.operation.selections, 'Query');
}
