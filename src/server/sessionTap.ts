/**
 * A transport under the SDK's server (the Transport interface, public API) that reads what comes
 * in before the SDK does, for two things the SDK leaves to us.
 *
 * A tools/call whose `arguments` is not an object: the SDK refuses it before any handler of ours
 * with its request schema's raw issues; this says it in one sentence (still invalid params, -32602).
 *
 * Resource subscriptions of 2026-07-28 clients. Such a client follows resources with a
 * `subscriptions/listen` request naming their URIs (no resources/subscribe); the SDK's stdio entry
 * answers it itself and routes the server's `notifications/resources/updated` onto it, but never
 * tells the server which URIs are followed, and this server watches a resource (a log's size, a
 * run's status) only while someone follows it. This transport sits under the SDK, reads each listen
 * going in and its end (a `notifications/cancelled` naming it, or the connection closing), and
 * subscribes and unsubscribes the URIs on the server's resources as resources/subscribe would.
 * The SDK acknowledges a listen at once, and a client may append to the log right after: so a listen
 * reaches the SDK only once its watches have their baseline (what they compare against), and every
 * later message waits behind it, in order. Otherwise a change made right after the acknowledgement
 * is part of the baseline and never reported. What it cannot do is refuse a URI (the
 * acknowledgement is the SDK's): one the resources refuse (not a resource of ours, over the limit)
 * is logged and never notified.
 */
import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/server';
import { PROTOCOL_VERSION_META_KEY, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Logger } from '../core/logger.js';
import type { ResourceWatches } from '../resources/index.js';

type Id = string | number;
type Followed = Pick<ResourceWatches, 'subscribe' | 'unsubscribe'>;
interface Message {
  id?: Id;
  method?: string;
  params?: { requestId?: Id; notifications?: { resourceSubscriptions?: unknown }; _meta?: Record<string, unknown>; arguments?: unknown };
}

/** What a JSON value is, in the words of a refusal. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'boolean') return 'true or false';
  return `a ${typeof value}`;
}

/** The refusal of a tools/call whose `arguments` is present and not an object; undefined otherwise. */
function argumentsRefusal(message: Message): string | undefined {
  if (message.method !== 'tools/call' || message.id === undefined || typeof message.params !== 'object' || message.params === null) return undefined;
  const value = message.params.arguments;
  if (value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value))) return undefined;
  return `The arguments of a tools/call must be a JSON object of argument names to values, not ${kindOf(value)}.`;
}

/** The URIs a listen asks to follow (strings only; the SDK matches them as spelled). */
function listenedUris(message: Message): string[] {
  const uris = message.params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? [...new Set(uris.filter((u): u is string => typeof u === 'string'))] : [];
}

export class SessionTap implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** The URIs of each open listen, by its request id. */
  private readonly listens = new Map<Id, string[]>();
  /** How many open listens follow each URI. */
  private readonly followers = new Map<string, number>();
  private target?: Followed;
  /** Where the messages handed to the SDK have got to: each goes after the one before. */
  private delivered: Promise<void> = Promise.resolve();

  constructor(
    private readonly inner: Transport,
    private readonly logger: Logger,
  ) {}

  /**
   * The resources of the server now serving (the SDK may replace the first one): every followed URI
   * is subscribed there, settled when their watches have their baseline.
   */
  async follow(target: Followed): Promise<void> {
    this.target = target;
    await Promise.all([...this.followers.keys()].map((uri) => this.subscribe(uri)));
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      const refusal = argumentsRefusal(message as Message);
      if (refusal !== undefined) {
        const error = { jsonrpc: '2.0' as const, id: (message as Message).id!, error: { code: ProtocolErrorCode.InvalidParams, message: refusal } };
        this.inner.send(error).catch((err: unknown) => this.onerror?.(err instanceof Error ? err : new Error(String(err))));
        return;
      }
      this.delivered = this.delivered.then(async () => {
        await this.observe(message as Message);
        this.onmessage?.(message, extra);
      }).catch((err: unknown) => this.onerror?.(err instanceof Error ? err : new Error(String(err))));
    };
    this.inner.onclose = () => {
      for (const id of [...this.listens.keys()]) this.end(id);
      void this.delivered.then(() => this.onclose?.());
    };
    this.inner.onerror = (error) => this.onerror?.(error);
    await this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** Settled when the message may go on to the SDK: a listen once the URIs it adds are watched. */
  private async observe(message: Message): Promise<void> {
    // Only a 2026-07-28 listen (the envelope names its protocol version) is served by the SDK.
    if (message.method === 'subscriptions/listen' && message.id !== undefined && message.params?._meta?.[PROTOCOL_VERSION_META_KEY] !== undefined) {
      if (this.listens.has(message.id)) return;
      const uris = listenedUris(message);
      this.listens.set(message.id, uris);
      const added = uris.filter((uri) => {
        const count = this.followers.get(uri) ?? 0;
        this.followers.set(uri, count + 1);
        return count === 0;
      });
      await Promise.all(added.map((uri) => this.subscribe(uri)));
    } else if (message.method === 'notifications/cancelled' && message.id === undefined && message.params?.requestId !== undefined) {
      this.end(message.params.requestId);
    }
  }

  private end(id: Id): void {
    const uris = this.listens.get(id);
    if (uris === undefined) return;
    this.listens.delete(id);
    for (const uri of uris) {
      const count = (this.followers.get(uri) ?? 1) - 1;
      if (count > 0) this.followers.set(uri, count);
      else {
        this.followers.delete(uri);
        try {
          this.target?.unsubscribe(uri);
        } catch {
          // A URI the resources refused at the listen: nothing was watched.
        }
      }
    }
  }

  /** Before the SDK has built a server there is nothing to subscribe on: follow() does it then. */
  private async subscribe(uri: string): Promise<void> {
    await this.target?.subscribe(uri).catch((err: unknown) => this.logger.warn({ uri, err: err instanceof Error ? err.message : String(err) }, 'a followed resource is not watched'));
  }
}
