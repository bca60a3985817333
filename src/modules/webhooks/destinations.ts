import { lookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';

/**
 * Where webhooks may go (C17, no SSRF): https only, and never to loopback, private, link-local or other
 * internal addresses, unless WEBHOOK_ALLOW_PRIVATE=true (tests and local receivers), which also allows http.
 * Checked when an endpoint is registered, and at delivery on the very address the connection is made to
 * (a DNS answer that changes between a check and the connection cannot slip through).
 */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 127],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(network, prefix, 'ipv6');
}

export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Why `text` cannot be an endpoint URL, or null when it can (DNS names are checked at delivery). */
export function endpointUrlProblem(text: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'The url must be a valid URL.';
  }
  if (url.username || url.password) return 'The url must not contain credentials.';
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'The url must use https.';
  const host = hostOf(url);
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || isInternalAddress(host))) {
    return 'The url must not point to a private or loopback address.';
  }
  return null;
}

/** A DNS lookup for the delivery's connection that refuses internal addresses (unless they are allowed). */
const guardedLookup =
  (allowPrivate: boolean): LookupFunction =>
  (hostname, options, callback) =>
    lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const internal = addresses.find(({ address }) => !allowPrivate && isInternalAddress(address));
      if (internal) return callback(new Error(`${hostname} resolves to a private or loopback address`), '', 0);
      const chosen = addresses[0]!;
      // Node asks for every address when it tries them in turn (autoSelectFamily), else for one.
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      return callback(null, chosen.address, chosen.family);
    });

export type WebhookAnswer = { status: number; excerpt: string };

/** Sends deliveries over kept-alive connections: one undici pool per origin, shared by every delivery to it. */
export type WebhookSender = {
  /**
   * POSTs one delivery: redirects are not followed (a 3xx is an answer like any other), the whole exchange has
   * `timeoutMs`, and only the first `excerptBytes` of the answer are read (a receiver cannot flood the worker).
   */
  post: (target: string, headers: Record<string, string>, body: string, options: { allowPrivate: boolean; timeoutMs: number; excerptBytes: number }) => Promise<WebhookAnswer>;
  close: () => Promise<void>;
};

/**
 * A sender with two undici agents (each a pool per origin with keep-alive): one whose connections refuse internal
 * addresses, one for WEBHOOK_ALLOW_PRIVATE and the operators' own ADMIN_WEBHOOK_URL. `connectionsPerOrigin` bounds
 * the sockets to one origin; the per-endpoint cap of the relay bounds the deliveries in flight to one endpoint.
 */
export function createWebhookSender({ connectionsPerOrigin = 64 } = {}): WebhookSender {
  const agent = (allowPrivate: boolean) =>
    new Agent({ connections: connectionsPerOrigin, keepAliveTimeout: 30_000, connect: { lookup: guardedLookup(allowPrivate) } });
  const agents = { guarded: agent(false), open: agent(true) };
  return {
    post: async (target, headers, body, { allowPrivate, timeoutMs, excerptBytes }) => {
      const problem = endpointUrlProblem(target, allowPrivate);
      if (problem) throw new Error(problem);
      const answer = await request(target, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        body,
        dispatcher: allowPrivate ? agents.open : agents.guarded,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const chunks: Buffer[] = [];
      let size = 0;
      try {
        for await (const chunk of answer.body as AsyncIterable<Buffer>) {
          chunks.push(chunk);
          size += chunk.length;
          // More than the excerpt: the rest is not read, and its connection is closed instead of kept.
          if (size >= excerptBytes) break;
        }
      } catch {
        // An answer cut short still has its status: the excerpt is what came.
      }
      return { status: answer.statusCode, excerpt: Buffer.concat(chunks).toString('utf8').slice(0, excerptBytes) };
    },
    close: async () => void (await Promise.all([agents.guarded.close(), agents.open.close()])),
  };
}
