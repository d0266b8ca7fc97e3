/**
 * Hermes Agent 0.16.0 as an MCP client of a stdio server, written from its `tools/mcp_tool.py`
 * (NousResearch/hermes-agent) and from what Hermes was seen to do with this server: what reaches
 * the server (its environment, the protocol, the capabilities) and what reaches the model (the
 * tools it is offered, the text of each result, the breaker's refusals). Over the SDK's stdio
 * client transport, as Hermes uses its Python SDK's.
 *
 * - Environment: only PATH, HOME, USER, LANG, LC_ALL, TERM, SHELL and TMPDIR of Hermes's own
 *   environment, then the entry's `env`. `${VAR}` in the entry is replaced from Hermes's
 *   environment; an unset one stays as written. An env value that is not a string stops the start
 *   (the SDK's StdioServerParameters wants strings): the reason goes to
 *   `$HERMES_HOME/logs/mcp-stderr.log` only, as does the server's stderr, and Hermes tries 4 times.
 * - Hermes's home: HERMES_HOME, else ~/.hermes; `hermes -p NAME` sets HERMES_HOME to
 *   ~/.hermes/profiles/NAME in Hermes's own process.
 * - Client: the SDK's default clientInfo, protocol 2025-11-25, capabilities sampling only (no
 *   elicitation, no roots). The server's instructions are kept, never shown to the model.
 * - Tools: `mcp_<server>_<tool>` (every character outside [A-Za-z0-9_] made `_`), plus
 *   list_resources and read_resource for a server with resources; input schemas converted as
 *   `_normalize_mcp_input_schema` does (nullable unions collapsed keeping a `nullable: true` hint,
 *   `properties: {}` added to objects without them, `required` pruned to the properties).
 * - Results: isError -> {"error": text}; else the text blocks joined by newlines as "result", and
 *   structuredContent beside it when there is one, serialized as Python's json.dumps does.
 * - Breaker: a result whose JSON has a top-level "error" counts a failure, any other resets the
 *   count; at 3 in a row the server is "unreachable" for 60 s and not called.
 * - Timeouts: a call gets the entry's `timeout` (default 120 s), the start `connect_timeout` (60 s).
 */
import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { Client, type CallToolResult, type Tool } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** One `mcp_servers` entry of Hermes's config.yaml, as YAML gives it (values not yet checked). */
export interface HermesEntry {
  command: string;
  args?: unknown[];
  env?: Record<string, unknown>;
  timeout?: number;
  connect_timeout?: number;
}

/** The function Hermes offers its model for one tool. */
export interface HermesTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

const SAFE_ENV_KEYS = ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TERM', 'SHELL', 'TMPDIR'];
const DEFAULT_TOOL_TIMEOUT_S = 120;
const DEFAULT_CONNECT_TIMEOUT_S = 60;
const START_ATTEMPTS = 4;
export const BREAKER_THRESHOLD = 3;
export const BREAKER_COOLDOWN_S = 60;

/** Hermes's home for its process environment: HERMES_HOME, else ~/.hermes. */
export function hermesHomeOf(env: Record<string, string | undefined>): string {
  return env.HERMES_HOME || join(env.HOME ?? '', '.hermes');
}

/** Hermes's process environment under `hermes -p NAME`: the profile's home as HERMES_HOME. */
export function withProfile(env: Record<string, string | undefined>, profile: string): Record<string, string | undefined> {
  return { ...env, HERMES_HOME: join(env.HOME ?? '', '.hermes', 'profiles', profile) };
}

/** `${VAR}` replaced from `env` in every string of `value`; an unset variable is kept as written. */
export function interpolate<T>(value: T, env: Record<string, string | undefined>): T {
  if (typeof value === 'string') return value.replace(/\$\{([^}]+)\}/g, (whole, name: string) => env[name.trim()] ?? whole) as T;
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env)) as T;
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)])) as T;
  return value;
}

export const sanitizeName = (part: string): string => part.replace(/[^A-Za-z0-9_]/g, '_');

type Schema = Record<string, unknown>;
const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const UNION_META = ['title', 'description', 'default', 'examples'];

/** A union of one schema and `{type: null}` becomes that schema with `nullable: true` (outer metadata carried over). */
function stripNullableUnions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripNullableUnions);
  if (!isSchema(node)) return node;
  const out: Schema = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, stripNullableUnions(v)]));
  for (const key of ['anyOf', 'oneOf']) {
    const variants = out[key];
    if (!Array.isArray(variants)) continue;
    const others = variants.filter((v) => !(isSchema(v) && v.type === 'null'));
    if (others.length !== 1 || others.length === variants.length) continue;
    const replacement: Schema = isSchema(others[0]) ? { ...others[0] } : {};
    replacement.nullable ??= true;
    for (const meta of UNION_META) if (meta in out && !(meta in replacement)) replacement[meta] = out[meta];
    return stripNullableUnions(replacement);
  }
  return out;
}

/** Objects get `type` when they plainly are one, `properties` when they have none, and `required` only names in `properties`. */
function repairObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(repairObjects);
  if (!isSchema(node)) return node;
  const out: Schema = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, repairObjects(v)]));
  if (!out.type && ('properties' in out || 'required' in out)) out.type = 'object';
  if (out.type === 'object') {
    if (!isSchema(out.properties)) out.properties = {};
    if (Array.isArray(out.required)) {
      const valid = out.required.filter((r) => typeof r === 'string' && r in (out.properties as Schema));
      if (valid.length === 0) delete out.required;
      else out.required = valid;
    }
  }
  return out;
}

/** A tool's input schema as Hermes gives it to its model. */
export function convertInputSchema(schema: unknown): Schema {
  if (!isSchema(schema) || Object.keys(schema).length === 0) return { type: 'object', properties: {} };
  const out = repairObjects(stripNullableUnions(schema));
  return isSchema(out) ? out : { type: 'object', properties: {} };
}

/** JSON as Python's json.dumps(value, ensure_ascii=False) writes it: ", " and ": " between items. */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (isSchema(value)) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`).join(', ')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** Credentials an error text may hold, replaced before the model reads it. */
const CREDENTIAL = /ghp_[A-Za-z0-9_]{1,255}|sk-[A-Za-z0-9_]{1,255}|Bearer\s+\S+|(?:token|key|API_KEY|password|secret)=[^\s&,;"']{1,255}/gi;
const sanitizeError = (text: string): string => text.replace(CREDENTIAL, '[REDACTED]');

/** What Hermes's handler returns for a result: the text the model reads. */
export function renderResult(result: CallToolResult): string {
  const texts = result.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text);
  if (result.isError) return pythonJson({ error: sanitizeError(texts.join('') || 'MCP tool returned an error') });
  const text = texts.join('\n');
  if (result.structuredContent === undefined || result.structuredContent === null) return pythonJson({ result: text });
  return pythonJson({ ...(text ? { result: text } : {}), structuredContent: result.structuredContent });
}

/** Whether Hermes counts this handler output as a failure: its JSON has a top-level `error`. */
export function countsAsFailure(output: string): boolean {
  try {
    const parsed = JSON.parse(output) as unknown;
    return isSchema(parsed) && 'error' in parsed;
  } catch {
    return false;
  }
}

function which(command: string, path: string | undefined): string {
  if (command.includes('/')) return command;
  for (const dir of (path ?? '').split(delimiter)) if (dir && existsSync(join(dir, command))) return join(dir, command);
  return command;
}

/** One call as the model made it and as it came back. */
export interface HermesCall {
  tool: string;
  args: Record<string, unknown>;
  /** Whether the call reached the server (false: the breaker answered). */
  reachedServer: boolean;
  /** The server's answer as JSON text (structuredContent, else the text), when it reached the server. */
  answerJson?: string;
  /** What reached the model. */
  output: string;
}

/** Hermes connected (or not) to one server from one config entry. */
export class HermesServer {
  readonly calls: HermesCall[] = [];
  tools: HermesTool[] = [];
  /** Kept from initialize; Hermes never shows it to the model. */
  instructions: string | undefined;
  /** Set when the server did not start: the reason, which Hermes writes only to the stderr log. */
  startFailure: string | undefined;
  private client: Client | undefined;
  /** Hermes's name of each server tool -> the server's. */
  private readonly originals = new Map<string, string>();
  private failures = 0;
  private openedAt = 0;

  private constructor(
    readonly name: string,
    readonly hermesHome: string,
    private readonly entry: HermesEntry,
  ) {}

  /** `$HERMES_HOME/logs/mcp-stderr.log`: the servers' stderr and every start failure. */
  get stderrLog(): string {
    return join(this.hermesHome, 'logs', 'mcp-stderr.log');
  }

  /** Starts the server of `entry` (named `name` in mcp_servers) from a Hermes whose process environment is `hermesEnv`. */
  static async connect(name: string, rawEntry: HermesEntry, hermesEnv: Record<string, string | undefined>): Promise<HermesServer> {
    const entry = interpolate(rawEntry, hermesEnv);
    const server = new HermesServer(name, hermesHomeOf(hermesEnv), entry);
    mkdirSync(join(server.hermesHome, 'logs'), { recursive: true });
    for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
      appendFileSync(server.stderrLog, `\n===== starting MCP server '${name}' (attempt ${attempt}) =====\n`);
      try {
        await server.start(hermesEnv);
        server.startFailure = undefined;
        return server;
      } catch (err) {
        server.startFailure = err instanceof Error ? err.message : String(err);
        appendFileSync(server.stderrLog, `MCP server '${name}' failed to start: ${server.startFailure}\n`);
      }
    }
    return server;
  }

  private async start(hermesEnv: Record<string, string | undefined>): Promise<void> {
    const env: Record<string, string> = {};
    for (const key of SAFE_ENV_KEYS) if (hermesEnv[key] !== undefined) env[key] = hermesEnv[key]!;
    for (const [key, value] of Object.entries(this.entry.env ?? {})) {
      if (typeof value !== 'string') throw new Error(`1 validation error for StdioServerParameters\nenv.${key}\n  Input should be a valid string [type=string_type, input_value=${JSON.stringify(value)}]`);
      env[key] = value;
    }
    // Started where Hermes runs: here its user's home.
    const transport = new StdioClientTransport({ command: which(this.entry.command, env.PATH), args: (this.entry.args ?? []).map(String), env, cwd: hermesEnv.HOME, stderr: 'pipe' });
    transport.stderr?.on('data', (chunk: Buffer) => appendFileSync(this.stderrLog, chunk));
    const client = new Client({ name: 'mcp', version: '0.1.0' }, { capabilities: { sampling: {} }, supportedProtocolVersions: ['2025-11-25'] });
    const timeout = (this.entry.connect_timeout ?? DEFAULT_CONNECT_TIMEOUT_S) * 1000;
    await client.connect(transport, { timeout });
    this.client = client;
    this.instructions = client.getInstructions();
    const { tools } = await client.listTools(undefined, { timeout });
    this.tools = tools.map((tool: Tool) => {
      const name = `mcp_${sanitizeName(this.name)}_${sanitizeName(tool.name)}`;
      this.originals.set(name, tool.name);
      return { name, description: tool.description || `MCP tool ${tool.name} from ${this.name}`, parameters: convertInputSchema(tool.inputSchema) };
    });
    if (client.getServerCapabilities()?.resources) {
      this.tools.push(
        { name: `mcp_${sanitizeName(this.name)}_list_resources`, description: `List available resources from MCP server '${this.name}'`, parameters: { type: 'object', properties: {} } },
        { name: `mcp_${sanitizeName(this.name)}_read_resource`, description: `Read a resource by URI from MCP server '${this.name}'`, parameters: { type: 'object', properties: { uri: { type: 'string', description: 'URI of the resource to read' } }, required: ['uri'] } },
      );
    }
  }

  /** The model calls `tool` (a name of `tools`, e.g. mcp_rl_training_rl_doctor); the text it gets back. */
  async call(tool: string, args: Record<string, unknown> = {}): Promise<string> {
    const record = (reachedServer: boolean, output: string, answerJson?: string): string => {
      this.calls.push({ tool, args, reachedServer, output, ...(answerJson === undefined ? {} : { answerJson }) });
      return output;
    };
    const age = (Date.now() - this.openedAt) / 1000;
    if (this.failures >= BREAKER_THRESHOLD && age < BREAKER_COOLDOWN_S) {
      const wait = Math.max(1, Math.floor(BREAKER_COOLDOWN_S - age));
      return record(false, pythonJson({ error: `MCP server '${this.name}' is unreachable after ${this.failures} consecutive failures. Auto-retry available in ~${wait}s. Do NOT retry this tool yet — use alternative approaches or ask the user to check the MCP server.` }));
    }
    if (!this.client) return record(false, this.outcome(pythonJson({ error: `MCP server '${this.name}' is not connected` })));
    const prefix = `mcp_${sanitizeName(this.name)}_`;
    let output: string;
    let answerJson: string | undefined;
    try {
      const timeout = (this.entry.timeout ?? DEFAULT_TOOL_TIMEOUT_S) * 1000;
      if (tool === `${prefix}list_resources`) {
        const { resources } = await this.client.listResources(undefined, { timeout });
        output = pythonJson({ resources: resources.map((r) => ({ uri: r.uri, name: r.name, ...(r.description ? { description: r.description } : {}), ...(r.mimeType ? { mimeType: r.mimeType } : {}) })) });
      } else if (tool === `${prefix}read_resource`) {
        const { contents } = await this.client.readResource({ uri: String(args.uri) }, { timeout });
        output = pythonJson({ result: contents.map((c) => ('text' in c ? c.text : `[binary data, ${c.blob.length} bytes]`)).join('\n') });
      } else {
        const original = this.originals.get(tool);
        if (original === undefined) throw new Error(`Unknown tool: ${tool}`);
        const result = (await this.client.callTool({ name: original, arguments: args }, { timeout })) as CallToolResult;
        answerJson = result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : result.content.map((b) => ('text' in b ? b.text : '')).join('');
        output = renderResult(result);
      }
    } catch (err) {
      output = pythonJson({ error: sanitizeError(`MCP call failed: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`) });
    }
    return record(true, this.outcome(output), answerJson);
  }

  /** The breaker's bookkeeping of one handler output. */
  private outcome(output: string): string {
    if (countsAsFailure(output)) {
      this.failures += 1;
      if (this.failures >= BREAKER_THRESHOLD) this.openedAt = Date.now();
    } else {
      this.failures = 0;
      this.openedAt = 0;
    }
    return output;
  }

  /** Characters that reached the model over every call so far. */
  get charactersToModel(): number {
    return this.calls.reduce((sum, c) => sum + c.output.length, 0);
  }

  async close(): Promise<void> {
    await this.client?.close();
  }
}
