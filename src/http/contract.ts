import { createRoute, OpenAPIHono, z, type Hook } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { AppError, ERRORS, validationError, type ErrorCode } from '../core/errors.js';
import type { AppEnv } from './context.js';
import { formBody, validationFailure, type InputSource } from './validation.js';

/**
 * Routes as contracts: every route is a `createRoute` whose request schemas validate (through the hook
 * below, rendering the C4 messages) and, with its response schemas, document the endpoint in /openapi.json.
 */

/** Interface A (and admin) failure envelope (spec §7, C2). */
export const FailureA = z
  .object({
    status: z.literal('failed'),
    errors: z.union([z.string(), z.array(z.string())]).openapi({ description: 'A message, or one message per failing field (422)' }),
    request_id: z.string().optional().openapi({ description: 'On 5xx: the id of the log line (also in X-Request-Id)' }),
  })
  .openapi('FailureA', { example: { status: 'failed', errors: ['The service ids field is required.'] } });

/** Interface B failure envelope (spec §7, C12). */
export const FailureB = z
  .object({ status: z.literal('error'), msg: z.string(), request_id: z.string().optional() })
  .openapi('FailureB', { example: { status: 'error', msg: 'Invalid purchase code.' } });

/** Interface A success envelope: `message` is an object, or a string for write operations. */
export const successA = <T extends z.ZodType>(message: T) => z.object({ status: z.literal('success'), message });

const FAILURE_DESCRIPTIONS: Record<number, string> = {
  400: 'The body could not be read (malformed JSON, unsupported content type)',
  401: 'Missing, invalid or expired credentials',
  403: "The credentials may not do this: a request from an address the account's allow-list does not hold, or a read-only key asked to write (C26)",
  404: 'Unknown resource',
  409: 'Refused by a business rule',
  413: `Body over the limit`,
  422: 'Validation failure: one message per failing field',
  429: 'Rate limited (see Retry-After)',
  500: 'Unexpected failure: a generic message and a request id',
  503: 'PostgreSQL or Redis unreachable: try again',
};

type Status = keyof typeof FAILURE_DESCRIPTIONS;

/** What an Interface A failure of each status says, for the reference's examples (422 keeps FailureA's own). */
const FAILURE_EXAMPLES: Partial<Record<Status, ErrorCode>> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'read_only_key',
  404: 'not_found',
  409: 'insufficient_balance',
  413: 'payload_too_large',
  429: 'rate_limited',
  500: 'internal',
  503: 'unavailable',
};

const failureExample = (status: Status) => {
  const code = FAILURE_EXAMPLES[status];
  if (!code) return {};
  const serverSide = status >= 500 ? { request_id: '0b6c1a3e-5d2f-4f8e-9a71-3c4d5e6f7a8b' } : {};
  return { example: { status: 'failed', errors: ERRORS[code].message, ...serverSide } };
};

/** The failure responses of a route, each in the envelope of its interface. */
export function failures(envelope: 'A' | 'B', statuses: readonly Status[]) {
  const schema = envelope === 'A' ? FailureA : FailureB;
  return Object.fromEntries(
    // Every route may meet the body limit (413, whatever it reads) and a dependency that is down.
    [...new Set([...statuses, 413, 500, 503])].sort().map((status) => [
      status,
      { description: FAILURE_DESCRIPTIONS[status]!, content: { 'application/json': { schema, ...(envelope === 'A' ? failureExample(status) : {}) } } },
    ]),
  );
}

/** A JSON response with its schema. */
export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/**
 * A request body taken as JSON, form-encoded or multipart (C5: the spec's write endpoints take all three).
 * The same schema validates each of them, a form's fields gathered into its lists first.
 */
export const formOrJson = <T extends z.ZodType>(schema: T) => {
  const form = formBody(schema);
  return {
    content: {
      'application/json': { schema },
      'application/x-www-form-urlencoded': { schema: form },
      'multipart/form-data': { schema: form },
    },
  };
};

type DocumentedBody = { required?: boolean };
type Document = { paths?: Record<string, Record<string, { requestBody?: DocumentedBody } | undefined> | undefined> };

/**
 * The OpenAPI document with each request body marked `required` when an empty one (read as `{}`, see readableBody) is
 * refused, so a client generated from it must send one. Declared on the route instead, @hono/zod-openapi would run the
 * validator of every content type the route takes on every request, whatever it was sent in.
 */
export function withRequiredBodies<D extends object>(document: D, app: OpenAPIHono<AppEnv>): D {
  const paths = (document as Document).paths ?? {};
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== 'route') continue;
    const { path, method, request } = definition.route;
    const media = request?.body?.content['application/json'];
    const schema = media && 'schema' in media ? media.schema : undefined;
    const body = paths[path]?.[method]?.requestBody;
    if (body && schema instanceof z.ZodType && !schema.safeParse({}).success) body.required = true;
  }
  return document;
}

/** A JSON request body (the admin API). */
export const jsonOnly = <T extends z.ZodType>(schema: T) => ({ content: { 'application/json': { schema } } });

/** Declares `text/plain` beside a JSON body (no validator: the route reads the text). */
const withPlainText = <T extends { content: object }>(body: T, description?: string): T =>
  description === undefined ? body : { ...body, content: { ...body.content, 'text/plain': { schema: z.string().openapi({ description }) } } };

const SOURCES: Record<string, InputSource> = { query: 'query', param: 'path', json: 'body', form: 'body', header: 'header' };

/**
 * Routes for a signed-in account (C3): the bearer token of A1; 429 when ACCOUNT_REQUESTS_PER_MINUTE is set (C11); 403
 * from an address the account's allow-list does not hold, or to a token of a read-only key asking to write (C26).
 */
export const TOKEN = { security: [{ bearerToken: [] }], failures: [403, 429] as Status[] };

/** Interface B routes: the api key, in any of its four places (C12). */
export const API_KEY = { security: [{ apiKey: [] }] };

/** Operator routes (C13). */
export const ADMIN = { security: [{ adminToken: [] }] };

/** The hook every request schema reports to: the C4 messages (422), or 404 for an id that cannot exist in the URL. */
export const renderValidation: Hook<unknown, AppEnv, string, unknown> = (result) => {
  // The validator hands the hook the input it checked (`data`), also when it failed.
  if (!result.success) throw validationFailure(result.error.issues, (result as { data?: unknown }).data, SOURCES[result.target] ?? 'body');
};

/**
 * The hook of a write whose handler also checks fields against the catalog (an unknown product, a service not of the
 * top-up, an order form's fields). When the request schema refuses the body, `check` judges the fields of the raw
 * body that the schema did not refuse (`refused` names those it did), so that the 422 names every failing field at once
 * (spec §7.3, C4), one message each. The guard has run, so only a signed-in caller gets here.
 */
export function withCatalogChecks<I, P extends string, R>(
  check: (body: Record<string, unknown>, refused: ReadonlySet<string>, c: Context<AppEnv>) => Promise<string[]>,
): Hook<I, AppEnv, P, R> {
  const hook = async (result: Parameters<Hook<I, AppEnv, P, R>>[0], c: Context<AppEnv, P>): Promise<void> => {
    if (result.success) return;
    const source = SOURCES[result.target] ?? 'body';
    const given = (result as { data?: unknown }).data;
    const failure = validationFailure(result.error.issues, given, source);
    if (source !== 'body') throw failure;
    const refused = new Set(result.error.issues.map((issue) => String(issue.path[0] ?? '')));
    const more = await check(given && typeof given === 'object' ? (given as Record<string, unknown>) : {}, refused, c);
    throw validationError([...[failure.errors].flat(), ...more]);
  };
  // OpenAPIHono awaits a hook; its types ask for the route's answer, which this one never gives (it passes or throws).
  return hook as unknown as Hook<I, AppEnv, P, R>;
}

/** A router whose routes validate through `renderValidation` (or, for Interface B, a hook of its own). */
export const contractRouter = (hook: Hook<unknown, AppEnv, string, unknown> = renderValidation) =>
  new OpenAPIHono<AppEnv>({ defaultHook: hook });

/** The encodings a route's body may come in, and the catalogue error that names them to a client sending another. */
type BodyTakes = { form: boolean; plainText: boolean; list: boolean; unsupported: ErrorCode };

/**
 * A body the route validates must be there to validate: an empty body reads as an empty JSON object (so a
 * missing field is "required"), and JSON that is not an object (or, for a route that takes a list, not a list) is
 * refused as unreadable (400), as is a content type the route does not take. Route middleware runs before the validators.
 */
export const readableBody =
  (takes: BodyTakes): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const unreadable = takes.list ? 'The request body is not a valid JSON list.' : 'The request body is not a valid JSON object.';
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (takes.plainText && type === 'text/plain') {
      // Read by the route itself (a code import, one code per line).
    } else if (type === '' || type === 'application/json' || type.endsWith('+json')) {
      const text = await c.req.text();
      let parsed: unknown = {};
      if (text.trim() !== '') {
        try {
          parsed = JSON.parse(text);
        } catch {
          throw new AppError('bad_request', unreadable);
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed) !== takes.list) throw new AppError('bad_request', unreadable);
      }
      if (type === '' || text.trim() === '') {
        // No body, or JSON sent without a content type: validated as the JSON object it is.
        const headers = new Headers(c.req.raw.headers);
        headers.set('content-type', 'application/json');
        c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers, body: JSON.stringify(parsed), signal: c.req.raw.signal });
        c.req.bodyCache = {};
      }
    } else if (takes.form && (type === 'application/x-www-form-urlencoded' || type === 'multipart/form-data')) {
      // Read once here (the validators reuse it): a form that cannot be read is a 400, whoever reads it first.
      await c.req.formData().catch((err: unknown) => {
        throw err instanceof AppError ? err : new AppError('bad_request', 'The form body could not be read.');
      });
    } else {
      throw new AppError(takes.unsupported);
    }
    await next();
  };

/** Whether a JSON body schema is a list (also one checked entry by entry first, a preprocessed list). */
const takesList = (schema: z.ZodType | undefined): boolean =>
  schema instanceof z.ZodArray || (schema instanceof z.ZodPipe && schema.out instanceof z.ZodArray);

/** What the body of an endpoint may come in (see `endpoint`): the spec's bodies JSON or a form, the admin API's JSON. */
const bodyTakes = (spec: { body?: z.ZodType; jsonBody?: z.ZodType; plainText?: { unsupported: ErrorCode } }): BodyTakes => ({
  form: spec.body !== undefined,
  plainText: spec.plainText !== undefined,
  list: takesList(spec.jsonBody),
  unsupported: spec.body ? 'unsupported_media_type' : (spec.plainText?.unsupported ?? 'unsupported_media_type_json'),
});

/** The validated body, whichever encoding it came in: `read` is `(target) => c.req.valid(target)`. */
export function validBody<T>(c: Context, read: (target: 'json' | 'form') => T): T {
  const type = (c.req.header('content-type') ?? '').toLowerCase();
  return read(type.startsWith('application/x-www-form-urlencoded') || type.startsWith('multipart/') ? 'form' : 'json');
}

/** How a route is protected: its security scheme (documented) and the middleware that enforces it, unless its router does. */
/** `post /card/make-order` → `postCardMakeOrder`; `/accounts/:id/balance` → `postAccountsIdBalance`. */
const operationId = (method: string, path: string) =>
  [method, ...path.split(/[^A-Za-z0-9]+/).filter(Boolean)].map((word, i) => (i === 0 ? word : word[0]!.toUpperCase() + word.slice(1))).join('');

/** `credentialsInBody`: the guard may find its credentials in the body (Interface B's api_key), which it then reads first. */
type Guard = {
  security: Array<Record<string, string[]>>;
  middleware?: MiddlewareHandler<AppEnv>;
  failures?: Status[];
  credentialsInBody?: boolean;
};

/**
 * One endpoint's contract: its request schemas (query, headers, a JSON/form body), its guard (security
 * scheme and the middleware that enforces it), the `message` of its success envelope and its failures.
 */
export function endpoint<
  Q extends z.ZodObject | undefined = undefined,
  H extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  J extends z.ZodType | undefined = undefined,
  P extends z.ZodObject | undefined = undefined,
>(spec: {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  tag: string;
  guard?: Guard;
  /** Middleware run after the guard, before the fields are validated (a rate limit, say). */
  use?: MiddlewareHandler<AppEnv>[];
  query?: Q;
  params?: P;
  headers?: H;
  /** A body in JSON or a form (the spec's write endpoints). */
  body?: B;
  /** A body in JSON only (the admin API). */
  jsonBody?: J;
  /** `text/plain` is taken besides JSON, and read by the route itself: its description, and the error naming both. */
  plainText?: { description: string; unsupported: ErrorCode };
  /** The success body: `{status: 'success', message}` around this, unless `envelope` says the whole body. */
  ok: z.ZodType;
  envelope?: 'message' | 'whole';
  /** The envelope of the failures: Interface A's (and the admin API's), or Interface B's. */
  failuresIn?: 'A' | 'B';
  errors?: Status[];
  description?: string;
  /** The answer carries an ETag, and a matching If-None-Match gets 304 (see cachedJson). */
  notModified?: boolean;
  /** The route also answers `text/csv` (when its query asks for it): what the CSV holds. */
  csv?: string;
}) {
  const { guard, query, params, headers, ok } = spec;
  const body = spec.body ?? spec.jsonBody;
  const readBody = body ? [readableBody(bodyTakes(spec))] : [];
  return createRoute({
    method: spec.method,
    path: spec.path.replace(/:([A-Za-z_]+)/g, '{$1}'),
    operationId: operationId(spec.method, spec.path),
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [spec.tag],
    // A public route says so (the token exchange, operations).
    security: guard ? guard.security : [],
    // The credentials are checked before the body is read, so a request without them costs no more than its headers;
    // a guard that may take them from the body (Interface B's api_key) has it read first.
    middleware: [
      ...(guard?.credentialsInBody ? readBody : []),
      ...(guard?.middleware ? [guard.middleware] : []),
      ...(guard?.credentialsInBody ? [] : readBody),
      ...(spec.use ?? []),
    ],
    request: {
      query: query as Q,
      params: params as P,
      headers: headers as H,
      body: (spec.body
        ? formOrJson(spec.body)
        : spec.jsonBody
          ? withPlainText(jsonOnly(spec.jsonBody), spec.plainText?.description)
          : undefined) as B extends z.ZodType
        ? ReturnType<typeof formOrJson<B>>
        : J extends z.ZodType
          ? ReturnType<typeof jsonOnly<J>>
          : undefined,
    },
    responses: {
      200: {
        ...json(spec.envelope === 'whole' ? ok : successA(ok), 'Success'),
        ...(spec.csv
          ? { content: { ...json(spec.envelope === 'whole' ? ok : successA(ok), 'Success').content, 'text/csv': { schema: { type: 'string' as const, description: spec.csv } } } }
          : {}),
        ...(spec.notModified ? { headers: { ETag: { description: 'Send it back in If-None-Match: 304 while the answer is unchanged', schema: { type: 'string' as const } } } } : {}),
      },
      ...(spec.notModified ? { 304: { description: 'Not modified: the If-None-Match ETag is current (no body)' } } : {}),
      ...failures(spec.failuresIn ?? 'A', [
        ...(guard ? [401 as const, ...(guard.failures ?? [])] : []),
        ...(body ? [400 as const, 413 as const, 422 as const] : []),
        ...(spec.errors ?? []),
      ]),
    },
  });
}
