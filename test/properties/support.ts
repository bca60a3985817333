/**
 * Property-based probing of the running service (fast-check): generators of hostile requests and one
 * checker of the invariants every answer must keep, whatever the input:
 *
 * - never a 5xx;
 * - never a stack trace or an internal detail in the body;
 * - always JSON, in the envelope of the interface asked (A and admin: `{status: 'failed', errors}`,
 *   B: `{status: 'error', msg}`; any 2xx: `{status: 'success', …}`);
 * - a failure (any non-2xx) writes no row to any table (test/helpers/writes.ts).
 *
 * `probe` sends each request on its own connection (`Connection: close`), so that an answer is judged on its
 * own; `reuse` checks the connection side separately: after any answer, a kept-alive connection must serve
 * the next request. Requests are sent one at a time, so the write counter before/after belongs to one request.
 *
 * A generated request is a plain, printable `RequestSpec`: fast-check prints the failing one as is, so the
 * counterexample of a failed property is the reproducing request. Long values are kept short in print
 * (`{$rep, n}` is `$rep` repeated `n` times; `{$raw}` is a number token written verbatim into JSON).
 */
import { createConnection } from 'node:net';
import fc from 'fast-check';
import type { TestApp } from '../helpers/harness.js';
import { watchWrites } from '../helpers/writes.js';

// ───────────────────────────── printable building blocks ─────────────────────────────

/** A JSON number token written verbatim (1e400, 9007199254740993, -0 …): JSON.stringify cannot write them. */
export type Raw = { $raw: string };
/** `$rep` repeated `n` times, materialised at send time so counterexamples stay readable. */
export type Rep = { $rep: string; n: number };
export type Scalar = string | number | boolean | null | Raw | Rep;

const isRaw = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as Raw).$raw === 'string' && Object.keys(v).length === 1;
const isRep = (v: unknown): v is Rep =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as Rep).$rep === 'string' && typeof (v as Rep).n === 'number' && Object.keys(v).length === 2;

/** JSON text of a generated value: `{$raw}` as a bare token, `{$rep}` as its long string, NaN/undefined as null. */
export function toJsonText(v: unknown): string {
  if (isRaw(v)) return v.$raw;
  if (isRep(v)) return JSON.stringify(v.$rep.repeat(v.n));
  if (Array.isArray(v)) return `[${v.map(toJsonText).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${toJsonText(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** The text a form field or a query value carries for a generated scalar. */
export function toText(v: unknown): string {
  if (isRaw(v)) return v.$raw;
  if (isRep(v)) return v.$rep.repeat(v.n);
  if (v === null) return 'null';
  if (typeof v === 'object') return toJsonText(v);
  return String(v);
}

/** Percent-encodes every byte of the UTF-8 form of `s` except the unreserved characters (lone surrogates become U+FFFD). */
export function pct(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

// ───────────────────────────── scalar pools ─────────────────────────────

/** Numbers past every id and money range, and tokens JSON.stringify never writes (00012 is not even valid JSON). */
export const RAW_NUMBERS = [
  '2147483647',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '1e30',
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '0.0',
  '1.0',
  '5.0000000000000001',
  '123456789012345678901234567890',
  '1E2',
  '00012',
] as const;

/** Strings that look like numbers, booleans or nothing, and text no column may store (NUL, lone surrogates). */
export const WEIRD_STRINGS = [
  '',
  ' ',
  '\t\n ',
  'NaN',
  '-NaN',
  'Infinity',
  '-Infinity',
  'undefined',
  'null',
  'true',
  'false',
  '0',
  '-0',
  '-1',
  '1',
  '1.5',
  '1e3',
  '1e400',
  '2147483648',
  '9007199254740993',
  '0x10',
  '0b1',
  ' 12 ',
  '+5',
  '1_000',
  '1,5',
  '١٢',
  '１２',
  '\u0000',
  'a\u0000b',
  '1\u0000',
  '\ud800',
  'x\udfff',
  '\udc00\ud800',
  '\ud83d',
  '💩',
  '\u202e',
  '\ufeff1',
  '\u00a0',
  '\u2028',
  'é',
  'ÿ',
  "'; drop table accounts; --",
  '%00',
  '%ED%A0%80',
  '%FF',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  '{}',
  '[]',
  '\\',
  '"',
  '$',
  '*',
] as const;

/** Names every plain JavaScript object inherits: a lookup keyed by client text must not find them. */
export const PROTO_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'toJSON', 'then'] as const;

/** Long strings: around each text limit, past the 255/500/1000/5000 checks and close to the body limit. */
const repArb: fc.Arbitrary<Rep> = fc.record({
  $rep: fc.constantFrom('a', '1', ' ', 'é', '💩', '\u0000', '\ud800', 'ab\n'),
  n: fc.constantFrom(33, 41, 101, 161, 201, 256, 501, 1001, 2001, 5001, 20_001, 300_000),
});

/** A unit of text: any code point, or one of the characters no field may hold. */
const oddChar = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '\ufffe', '\uffff', '\u0085') },
);
export const oddString = fc.string({ unit: oddChar, maxLength: 24 });

/** Any scalar a client might put where an id, a number or a text is expected; `ids` are real row ids. */
export function scalarArb(ids: readonly number[] = []): fc.Arbitrary<Scalar> {
  const idLike = [...ids, 0, -1, 1, 2, 3, 5, 100, 101, 2_147_483_647];
  return fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...idLike) },
    { weight: 2, arbitrary: fc.constantFrom(...idLike).map(String) },
    { weight: 1, arbitrary: fc.integer() },
    { weight: 1, arbitrary: fc.double() },
    { weight: 1, arbitrary: fc.constantFrom(-0.5, 0.5, 1.5, 4.99, 5.01, 1e21, -1e21, Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, Number.MIN_VALUE) },
    { weight: 1, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 3, arbitrary: fc.constantFrom(...WEIRD_STRINGS) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTO_NAMES) },
    { weight: 2, arbitrary: oddString },
    { weight: 1, arbitrary: fc.string() },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBERS).map((r): Raw => ({ $raw: r })) },
    { weight: 1, arbitrary: repArb },
  );
}

/** Where a scalar is expected: a scalar mostly, sometimes a list or an object. */
export function fieldArb(ids: readonly number[] = [], extra?: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const scalar = scalarArb(ids);
  const options: Array<fc.WeightedArbitrary<unknown>> = [
    { weight: 8, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(scalar, { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(keyArb([]), scalar, { maxKeys: 3 }) },
  ];
  if (extra) options.push({ weight: 8, arbitrary: extra });
  return fc.oneof(...options);
}

/** Object keys: the endpoint's own names (with their array suffixes), or anything. */
export function keyArb(names: readonly string[]): fc.Arbitrary<string> {
  const own = names.length ? [{ weight: 4, arbitrary: fc.constantFrom(...names) }] : [];
  return fc.oneof(
    ...own,
    { weight: 1, arbitrary: fc.constantFrom('', ' ', 'a[]', 'a[0]', '\u0000', '\ud800', 'api_key', ...PROTO_NAMES) },
    { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  );
}

/** Any JSON value, deep and odd: objects, arrays and the scalar pool at every level. */
export function jsonValueArb(names: readonly string[] = [], ids: readonly number[] = []): fc.Arbitrary<unknown> {
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      scalarArb(ids),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(keyArb(names), tie('value'), { maxKeys: 5 }),
    ),
  }));
  return value;
}

/**
 * A body object shaped like the endpoint's: each named field present or not, with a plausible value
 * (`valid`) or anything, plus a few unknown keys.
 */
export function nearObject(
  fields: Record<string, fc.Arbitrary<unknown>>,
  ids: readonly number[] = [],
): fc.Arbitrary<Record<string, unknown>> {
  const shape = Object.fromEntries(Object.entries(fields).map(([k, valid]) => [k, fieldArb(ids, valid)]));
  const mixed = fc
    .tuple(fc.record(shape, { requiredKeys: [] }), fc.dictionary(keyArb(Object.keys(fields)), fieldArb(ids), { maxKeys: 2 }))
    .map(([known, extra]) => ({ ...extra, ...known }));
  // Every field plausible: such bodies get past validation to the business rules and to success.
  const plausible = fc.record(fields) as fc.Arbitrary<Record<string, unknown>>;
  return fc.oneof({ weight: 3, arbitrary: mixed }, { weight: 1, arbitrary: plausible });
}

// ───────────────────────────── bodies ─────────────────────────────

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/vnd.api+json',
  'application/json;',
  ' application/json ',
  'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=latin1',
  'multipart/form-data',
  'multipart/form-data; boundary=X',
  'multipart/mixed; boundary=X',
  'text/plain',
  'text/plain; charset=utf-8',
  'text/html',
  'application/xml',
  'application/octet-stream',
  '*/*',
  ';',
  '',
] as const;

const headerChar = fc
  .oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }) },
    { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
    { weight: 1, arbitrary: fc.constantFrom(0x20, 0x09) },
  )
  .map((c) => String.fromCharCode(c));

/** A header value node's fetch accepts: visible ASCII and latin1 (no NUL, CR or LF). */
export const headerText = fc.string({ unit: headerChar, maxLength: 40 });

export const contentTypeArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: headerText },
);

type FormStyle = 'brackets' | 'repeat' | 'indexed' | 'json';

/** How a request body is sent. Every kind sets exactly the Content-Type it names (or none). */
export type BodySpec =
  | { kind: 'none'; contentType?: string }
  /** JSON text of `value` (any JSON value, not only objects). */
  | { kind: 'json'; value: unknown; contentType?: string }
  /** An urlencoded body built from an object: lists as `k[]`, repeated `k`, `k[i]`, or JSON text. */
  | { kind: 'form'; fields: Record<string, unknown>; style: FormStyle; contentType?: string }
  /** An urlencoded body written by hand: any key and value, with escapes such as %00, %ED%A0%80, %FF. */
  | { kind: 'rawForm'; pairs: Array<[string, string]>; contentType?: string }
  /** A multipart body built by FormData from an object (files included), under its own or another content type. */
  | { kind: 'multipart'; fields: Record<string, unknown>; files: string[]; contentType?: string }
  /** Any text under any content type: malformed JSON, a broken multipart, plain text. */
  | { kind: 'text'; text: string; contentType?: string }
  /** Bytes that need not be UTF-8. */
  | { kind: 'bytes'; bytes: number[]; contentType?: string }
  /** Deeply nested JSON (`depth` levels of `open`). */
  | { kind: 'deep'; open: '[' | '{"a":'; depth: number; contentType?: string }
  /** `bytes` bytes of filler text (past the 1 MiB limit, or just large). */
  | { kind: 'filler'; bytes: number; contentType?: string };

const MALFORMED_JSON = [
  '{',
  '}',
  '{"a":}',
  '{"a":1,}',
  "{'a':1}",
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":undefined}',
  '[1,2',
  'null',
  'true',
  '42',
  '"text"',
  '[]',
  '[{}]',
  '\u0000',
  '\ufeff{}',
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"a":"\\uZZZZ"}',
  '{"a":1}{"b":2}',
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--X--\r\n',
  '--X\r\nContent-Disposition: form-data\r\n\r\n',
  'a=1&a=2&b[]=3',
  '%',
  '=&=&',
] as const;

const RAW_ESCAPES = ['%00', '%ED%A0%80', '%ED%B0%80', '%FF', '%C0%80', '%E2%80%AE', '%', '%2', '%zz', '+', '%2B', '%26', '%3D', '%5B%5D', '[]', '%0A', '%0D', '%F0%9F%92%A9'] as const;

/** A raw query/form component: properly encoded text, raw escapes, or a mix. */
export function rawComponent(values: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const safe = fc.constantFrom(...'abcXYZ019-_.~!$\'()*,;:@/?'.split(''));
  return fc.oneof(
    { weight: 5, arbitrary: values.map(pct) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_ESCAPES) },
    { weight: 2, arbitrary: fc.array(fc.oneof(safe, fc.constantFrom(...RAW_ESCAPES)), { maxLength: 8 }).map((p) => p.join('')) },
  );
}

/** A request body for a write endpoint whose body object looks like `fields`. */
export function bodyArb(fields: fc.Arbitrary<Record<string, unknown>>, names: readonly string[] = []): fc.Arbitrary<BodySpec> {
  const maybeType = (preferred: string[]) =>
    fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...preferred) }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: contentTypeArb });
  const keys = keyArb(names);
  const formStyle = fc.constantFrom<FormStyle>('brackets', 'repeat', 'indexed', 'json');
  return fc.oneof(
    { weight: 8, arbitrary: fc.record({ kind: fc.constant('json' as const), value: fields, contentType: maybeType(['application/json']) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('json' as const), value: jsonValueArb(names), contentType: maybeType(['application/json']) }) },
    {
      weight: 4,
      arbitrary: fc.record({ kind: fc.constant('form' as const), fields, style: formStyle, contentType: maybeType(['application/x-www-form-urlencoded']) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('rawForm' as const),
        pairs: fc.array(fc.tuple(rawComponent(keys), rawComponent(scalarArb().map(toText))), { maxLength: 5 }),
        contentType: maybeType(['application/x-www-form-urlencoded']),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record(
        {
          kind: fc.constant('multipart' as const),
          fields,
          files: fc.array(keys, { maxLength: 2 }),
          contentType: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: contentTypeArb }),
        },
        { requiredKeys: ['kind', 'fields', 'files'] },
      ),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('text' as const),
        text: fc.oneof(fc.constantFrom(...MALFORMED_JSON), fc.string({ unit: oddChar, maxLength: 40 })),
        contentType: fc.option(contentTypeArb, { nil: undefined }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('bytes' as const),
        bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 24 }),
        contentType: fc.option(contentTypeArb, { nil: undefined }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('deep' as const),
        open: fc.constantFrom('[' as const, '{"a":' as const),
        depth: fc.constantFrom(100, 2_000, 20_000, 200_000),
        contentType: fc.constantFrom('application/json', 'application/x-www-form-urlencoded'),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('none' as const),
        contentType: fc.option(contentTypeArb, { nil: undefined }),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('filler' as const),
        bytes: fc.constantFrom(1024 * 1024 + 1, 2 * 1024 * 1024),
        contentType: fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=X'),
      }),
    },
  );
}

/** Filler bodies of every size class: small, around the socket buffers, just under and past the 1 MiB limit. */
export const fillerArb: fc.Arbitrary<BodySpec> = fc.record({
  kind: fc.constant('filler' as const),
  bytes: fc.constantFrom(0, 100, 10_000, 60_000, 100_000, 140_000, 300_000, 900_000, 1024 * 1024 + 1),
  contentType: fc.constantFrom('application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=X'),
});

function formPairs(fields: Record<string, unknown>, style: FormStyle): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(fields)) {
    if (Array.isArray(value) && style !== 'json') {
      value.forEach((item, i) => pairs.push([style === 'brackets' ? `${key}[]` : style === 'indexed' ? `${key}[${i}]` : key, toText(item)]));
    } else if (typeof value === 'object' && value !== null && !isRaw(value) && !isRep(value) && style !== 'json') {
      for (const [sub, item] of Object.entries(value)) pairs.push([`${key}[${sub}]`, toText(item)]);
    } else {
      pairs.push([key, toText(value)]);
    }
  }
  return pairs;
}

/** The bytes and Content-Type of a body spec. */
export async function materializeBody(body: BodySpec): Promise<{ bytes?: Buffer; contentType?: string }> {
  switch (body.kind) {
    case 'none':
      return { contentType: body.contentType };
    case 'json':
      return { bytes: Buffer.from(toJsonText(body.value), 'utf8'), contentType: body.contentType };
    case 'form': {
      const form = new URLSearchParams(formPairs(body.fields, body.style));
      return { bytes: Buffer.from(form.toString(), 'utf8'), contentType: body.contentType };
    }
    case 'rawForm':
      return { bytes: Buffer.from(body.pairs.map(([k, v]) => `${k}=${v}`).join('&'), 'utf8'), contentType: body.contentType };
    case 'multipart': {
      const form = new FormData();
      for (const [k, v] of formPairs(body.fields, 'brackets')) form.append(k, v);
      for (const name of body.files) form.append(name, new Blob(['file content']), 'file.txt');
      const encoded = new Response(form);
      const bytes = Buffer.from(await encoded.arrayBuffer());
      return { bytes, contentType: body.contentType ?? encoded.headers.get('content-type') ?? undefined };
    }
    case 'text':
      return { bytes: Buffer.from(body.text, 'utf8'), contentType: body.contentType };
    case 'bytes':
      return { bytes: Buffer.from(body.bytes), contentType: body.contentType };
    case 'deep':
      return {
        bytes: Buffer.from(`${body.open.repeat(body.depth)}1${(body.open === '[' ? ']' : '}').repeat(body.depth)}`),
        contentType: body.contentType,
      };
    case 'filler':
      return { bytes: Buffer.alloc(body.bytes, 0x61), contentType: body.contentType };
  }
}

// ───────────────────────────── queries, paths, headers ─────────────────────────────

/** A query string: the endpoint's keys (plain, `[]`, `[0]`, encoded) or any key, repeated at will, any value. */
export function queryArb(
  names: readonly string[],
  values: fc.Arbitrary<string>,
  plausible?: fc.Arbitrary<Array<[string, string]>>,
): fc.Arbitrary<Array<[string, string | null]>> {
  const suffixed = names.length
    ? fc.tuple(fc.constantFrom(...names), fc.constantFrom('', '', '', '[]', '[0]', '%5B%5D', '[a]')).map(([n, s]) => `${n}${s}`)
    : fc.constant('x');
  const key = fc.oneof(
    { weight: 6, arbitrary: suffixed },
    { weight: 1, arbitrary: rawComponent(fc.string({ maxLength: 6 })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...PROTO_NAMES), fc.constantFrom('', '[]', '[0]')).map(([n, s]) => `${n}${s}`) },
  );
  const value = fc.oneof({ weight: 8, arbitrary: rawComponent(values) }, { weight: 1, arbitrary: fc.constant(null) });
  const pairs = fc.array(fc.tuple(key, value), { maxLength: 5 });
  if (!plausible) return pairs;
  // Sometimes the endpoint's own parameters with plausible values first, then anything.
  return fc
    .tuple(fc.option(plausible, { freq: 3, nil: undefined }), pairs)
    .map(([first, rest]) => [...(first ?? []).map(([k, v]): [string, string] => [k, pct(v)]), ...rest]);
}

/** Values for a query parameter: real ids, the scalar pool, long text. */
export const queryValues = (ids: readonly number[] = [], extra: readonly string[] = []) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...ids.map(String), '1', '0', '-1', '2147483647', '2147483648', '9007199254740993', '1e30', ...extra) },
    { weight: 2, arbitrary: fc.constantFrom(...WEIRD_STRINGS, ...PROTO_NAMES, ...RAW_NUMBERS) },
    { weight: 2, arbitrary: scalarArb(ids).map(toText) },
  );

export const queryString = (pairs: Array<[string, string | null]>) =>
  pairs.length ? `?${pairs.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&')}` : '';

/** A path segment for an `:id` or `:utr` parameter, written raw into the URL. */
export function segmentArb(real: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...real) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        '0',
        '-1',
        '1',
        '2147483647',
        '2147483648',
        '9007199254740993',
        '1e30',
        '1.5',
        '01',
        '%2031',
        'abc',
        'NaN',
        'null',
        '%00',
        '%ED%A0%80',
        '%FF',
        '%',
        '%2F',
        '..',
        '.',
        '%2E%2E',
        '%20',
        '%F0%9F%92%A9',
        'T%00',
        'TABC123',
        'tabc',
        '0x1F',
        '１',
        '%EF%BC%91',
      ),
    },
    { weight: 2, arbitrary: rawComponent(scalarArb().map(toText)) },
    { weight: 1, arbitrary: fc.constantFrom(40, 400, 5000).map((n) => '9'.repeat(n)) },
    { weight: 1, arbitrary: real.length ? fc.constantFrom(...real).map((r) => `${r}%00`) : fc.constant('1%00') },
  );
}

export type HeaderValue = string | Rep;

/** A header value: printable ASCII/latin1 text, typical junk, or a long value (past the 16 KiB header limit too). */
export const headerValueArb: fc.Arbitrary<HeaderValue> = fc.oneof(
  { weight: 6, arbitrary: headerText },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'null',
      'undefined',
      '0',
      '-1',
      'Bearer',
      'Bearer ',
      'Bearer  x',
      'bearer null',
      'Basic YWRtaW46YWRtaW4=',
      'Basic',
      'Basic %%%',
      'Token abc',
      '%00',
      '%ED%A0%80',
      'é',
      'ÿÿÿ',
      '\u00a0',
      'es',
      'es-MX,es;q=0.9',
      'en-US',
      '*',
      'es;q=0',
      'ES',
      'application/json',
    ),
  },
  { weight: 1, arbitrary: fc.record({ $rep: fc.constantFrom('a', 'é', 'Bearer '), n: fc.constantFrom(256, 513, 4096, 17_000) }) },
);

/** Optional extra headers among the names the brief names, each with any value. */
export function extraHeadersArb(names: readonly string[] = ['PublicKey', 'SecretKey', 'Authorization', 'X-API-Key', 'Idempotency-Key', 'Accept-Language']) {
  return fc.dictionary(fc.constantFrom(...names), headerValueArb, { maxKeys: 3 });
}

// ───────────────────────────── the request and its checks ─────────────────────────────

export type RequestSpec = {
  method: string;
  path: string;
  /** Raw query pairs, already encoded (null value: a bare key). */
  query?: Array<[string, string | null]>;
  headers?: Record<string, HeaderValue | undefined>;
  body?: BodySpec;
};

export type Envelope = 'A' | 'B';

export type Outcome = { status: number; body: Record<string, unknown>; wrote: number };

const STACK_TRACE = [/\n\s+at\s/, /node_modules/, /\bError:/, /\bat [\w.<>]+ \(.*:\d+:\d+\)/, /\.ts:\d+:\d+/];

function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      stringsOf(v, out);
    }
  }
  return out;
}

const describeBody = (text: string) => (text.length > 600 ? `${text.slice(0, 600)}… (${text.length} chars)` : text);

/** A violation, with the answer that shows it. */
class Violation extends Error {}

/**
 * Sends generated requests one at a time and checks every answer. Counts requests and answers per label,
 * so a run shows which paths were reached (validation, success, business rules) and not only 401s.
 */
export class Prober {
  requests = 0;
  /** Successful requests that wrote, and the rows they wrote: shows the write counter is live. */
  writingSuccesses = 0;
  rowsWritten = 0;
  readonly seen = new Map<string, Map<number, number>>();
  private readonly started = Date.now();

  constructor(
    private readonly app: TestApp,
    private readonly writes: () => Promise<number>,
  ) {}

  /** A Prober on `app` whose write counter watches every table from now on (test/helpers/writes.ts). */
  static async watching(app: TestApp): Promise<Prober> {
    return new Prober(app, (await watchWrites(app.services.sql)).count);
  }

  async send(spec: RequestSpec): Promise<Response> {
    const headers: Record<string, string> = {};
    let bytes: Buffer | undefined;
    if (spec.body) {
      const body = await materializeBody(spec.body);
      bytes = body.bytes;
      if (body.contentType !== undefined) headers['Content-Type'] = body.contentType;
    }
    for (const [name, value] of Object.entries(spec.headers ?? {})) {
      if (value === undefined) continue;
      headers[name] = typeof value === 'string' ? value : value.$rep.repeat(value.n);
    }
    const method = spec.method.toUpperCase();
    // One connection per probe: an answer is judged on its own, whatever an earlier request left on a
    // keep-alive connection (that is the job of `reuse`).
    headers.Connection = 'close';
    return this.app.request(`${spec.path}${queryString(spec.query ?? [])}`, {
      method,
      headers,
      redirect: 'manual',
      ...(bytes !== undefined && method !== 'GET' && method !== 'HEAD' ? { body: bytes as unknown as RequestInit['body'] } : {}),
    });
  }

  /** Sends `spec` and asserts the invariants of the module comment; returns the parsed answer. */
  async probe(envelope: Envelope, label: string, spec: RequestSpec): Promise<Outcome> {
    const before = await this.writes();
    const started = Date.now();
    let response: Response;
    let text: string;
    try {
      response = await this.send(spec);
      text = await response.text();
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new Violation(
        `no answer: ${(err as Error).message} (${cause?.code ?? cause?.message ?? 'no cause'}) after ${Date.now() - started} ms\n` +
          `  request: ${spec.method} ${spec.path}`,
      );
    }
    const after = await this.writes();
    this.requests += 1;
    const counts = this.seen.get(label) ?? new Map<number, number>();
    counts.set(response.status, (counts.get(response.status) ?? 0) + 1);
    this.seen.set(label, counts);

    const answer = `HTTP ${response.status} ${response.headers.get('content-type') ?? '(no content-type)'} ${describeBody(text)}`;
    // PROBE_LOG=<label substring> prints each request of that label with its answer (for tuning generators).
    if (process.env.PROBE_LOG && label.includes(process.env.PROBE_LOG)) console.log(`${JSON.stringify(spec).slice(0, 300)}\n  → (${Date.now() - started} ms) ${answer.slice(0, 200)}`);
    const fail = (what: string): never => {
      throw new Violation(`${what}\n  request: ${spec.method} ${spec.path}${describeBody(queryString(spec.query ?? []))}\n  answer:  ${answer}`);
    };
    if (response.status >= 500) fail('a 5xx answer');
    for (const pattern of STACK_TRACE) if (pattern.test(text)) fail(`an internal detail in the body (${pattern})`);
    if (!(response.headers.get('content-type') ?? '').includes('application/json')) fail('an answer that is not JSON');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      fail('an unparseable JSON body');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) fail('a JSON body that is not an object');
    const json = body as Record<string, unknown>;
    for (const s of stringsOf(json)) for (const pattern of STACK_TRACE) if (pattern.test(s)) fail(`an internal detail in a body string (${pattern})`);

    const ok = response.status >= 200 && response.status < 300;
    if (ok) {
      if (json.status !== 'success') fail('a 2xx without status "success"');
      if (envelope === 'A' && !('message' in json)) fail('an Interface A success without `message`');
      if (envelope === 'B' && !['data', 'items', 'item'].some((k) => k in json)) fail('an Interface B success without data/items/item');
    } else if (envelope === 'A') {
      const keys = Object.keys(json).sort().join(',');
      if (keys !== 'errors,status' || json.status !== 'failed') fail('a failure outside the {status: "failed", errors} envelope');
      const errors = json.errors;
      const valid =
        (typeof errors === 'string' && errors.trim() !== '') ||
        (Array.isArray(errors) && errors.length > 0 && errors.every((e) => typeof e === 'string' && e.trim() !== ''));
      if (!valid) fail('`errors` that is neither a non-empty string nor a non-empty list of strings');
    } else {
      const keys = Object.keys(json).sort().join(',');
      if (keys !== 'msg,status' || json.status !== 'error') fail('a failure outside the {status: "error", msg} envelope');
      if (typeof json.msg !== 'string' || json.msg.trim() === '') fail('`msg` that is not a non-empty string');
    }
    if (!ok && after !== before) fail(`a failure that wrote ${after - before} row(s)`);
    if (ok && after > before) {
      this.writingSuccesses += 1;
      this.rowsWritten += after - before;
    }
    return { status: response.status, body: json, wrote: after - before };
  }

  /**
   * Sends `spec` on a fresh keep-alive connection (raw HTTP/1.1, as any keep-alive client does) and, once
   * its answer is in, `GET /health` on the same connection: unless the answer said `Connection: close`, the
   * connection must serve that next request. A request whose body was refused unread must not leave the
   * connection stuck (the next request unanswered, then a reset).
   */
  async reuse(label: string, spec: RequestSpec): Promise<void> {
    const headers: Record<string, string> = {};
    let bytes: Buffer = Buffer.alloc(0);
    if (spec.body) {
      const body = await materializeBody(spec.body);
      bytes = body.bytes ?? bytes;
      if (body.contentType !== undefined) headers['Content-Type'] = body.contentType;
    }
    for (const [name, value] of Object.entries(spec.headers ?? {})) {
      if (value !== undefined) headers[name] = typeof value === 'string' ? value : value.$rep.repeat(value.n);
    }
    const { host, port } = new URL(this.app.baseUrl);
    const head =
      `${spec.method.toUpperCase()} ${spec.path}${queryString(spec.query ?? [])} HTTP/1.1\r\nHost: ${host}\r\n` +
      Object.entries(headers).map(([k, v]) => `${k}: ${v.trim()}\r\n`).join('') +
      (spec.body && spec.body.kind !== 'none' ? `Content-Length: ${bytes.length}\r\n` : '') +
      '\r\n';
    const next = Buffer.from(`GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 'latin1');
    const outcome = await keepAliveExchange(Number(port), Buffer.concat([Buffer.from(head, 'latin1'), bytes]), next);
    this.requests += outcome.second ? 2 : 1;
    const counts = this.seen.get(label) ?? new Map<number, number>();
    const status = outcome.first?.status ?? 0;
    counts.set(status, (counts.get(status) ?? 0) + 1);
    this.seen.set(label, counts);
    if (outcome.error) {
      const first = outcome.first ? `HTTP ${outcome.first.status} ${describeBody(outcome.first.body.toString('utf8'))}` : '(none)';
      throw new Violation(
        `${outcome.error}\n  request: ${spec.method} ${spec.path} with a ${bytes.length}-byte body\n  its answer: ${first}`,
      );
    }
  }

  /** Requests sent and answers per label, for the run log. */
  summary(title: string): string {
    const lines = [...this.seen].map(
      ([label, counts]) =>
        `  ${label.padEnd(48)} ${[...counts].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ')}`,
    );
    const seconds = ((Date.now() - this.started) / 1000).toFixed(1);
    const writes = `${this.writingSuccesses} successful requests wrote ${this.rowsWritten} rows; failures wrote none`;
    return `${title}: ${this.requests} requests in ${seconds} s (${writes})\n${lines.join('\n')}`;
  }
}

/**
 * fast-check settings shared by the properties: a random seed (printed on failure with the shrunk
 * counterexample) and a time limit that bounds shrinking (an interrupted shrink still reports the smallest
 * counterexample found so far; a passing property takes a few seconds at most).
 */
export const runs = (numRuns: number, timeLimitMs = 30_000): fc.Parameters<unknown> => ({
  numRuns,
  plugins: [fc.interruptAfterTimeLimit(timeLimitMs)],
});

/** Test timeout for one property: generous, so that shrinking a counterexample can finish. */
export const PROPERTY_TIMEOUT = 180_000;

/** Limits raised so that generated requests reach validation rather than the failed-attempt limiters. */
export const OPEN_LIMITS = {
  AUTH_FAILURES_PER_KEY: '1000000',
  AUTH_FAILURES_PER_IP: '1000000',
  LICENSE_VALIDATIONS_PER_KEY: '1000000',
  LICENSE_VALIDATIONS_PER_IP: '1000000',
};

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

// ───────────────────────────── the properties the three files share ─────────────────────────────

/** An Authorization header: mostly one of the `valid` forms, sometimes any header value, a near miss, or none. */
export const authorizationArb = (valid: readonly string[], nearMisses: readonly string[]): fc.Arbitrary<HeaderValue | undefined> =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...valid) },
    { weight: 2, arbitrary: headerValueArb },
    { weight: 1, arbitrary: fc.constantFrom(...nearMisses) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

/** `authorization` (when not missing) plus up to three of the headers `names`, each with any value. */
export const authHeadersArb = (authorization: fc.Arbitrary<HeaderValue | undefined>, names: readonly string[]) =>
  fc.tuple(authorization, extraHeadersArb(names)).map(([auth, extra]) => ({ ...extra, ...(auth === undefined ? {} : { Authorization: auth }) }));

/** Mostly no query string, sometimes `query` (1 in `1 + emptyWeight`). */
export const rareQueryArb = (query: fc.Arbitrary<Array<[string, string | null]>>, emptyWeight = 4) =>
  fc.oneof({ weight: emptyWeight, arbitrary: fc.constant([] as Array<[string, string | null]>) }, { weight: 1, arbitrary: query });

/** What a request carries to authenticate: its headers and, for an api key in the query, the query pairs. */
export type Access = { headers: Record<string, HeaderValue | undefined>; query?: Array<[string, string]> };

/** Credentials that are headers only (Interface A, admin). */
export const headerAccess = (headers: fc.Arbitrary<Record<string, HeaderValue | undefined>>): fc.Arbitrary<Access> => headers.map((h) => ({ headers: h }));

/** The headers of `access`, and its query pairs first when it has any. */
const accessParts = (access: Access): Pick<RequestSpec, 'query' | 'headers'> =>
  access.query === undefined ? { headers: access.headers } : { query: access.query, headers: access.headers };

/**
 * Asserts, over `numRuns` generated requests, that each answer keeps the invariants of the module comment
 * (`Prober.probe`) in `envelope`: one envelope, or one chosen per request.
 */
export async function assertProbes(
  prober: Prober,
  envelope: Envelope | ((request: RequestSpec) => Envelope),
  label: string,
  spec: fc.Arbitrary<RequestSpec>,
  numRuns: number,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(spec, async (request) => {
      await prober.probe(typeof envelope === 'function' ? envelope(request) : envelope, label, request);
    }),
    runs(numRuns),
  );
}

/**
 * Any method on any path of an interface, and near misses: a known path, a known path plus one of
 * `suffixes`, a known path in capitals, or one of `nearMisses`; any credentials from `access`, any body but
 * on a GET. Each answer must keep the invariants (`assertProbes`).
 */
export async function assertAnyMethodAnyPath(
  prober: Prober,
  p: {
    envelope: Envelope | ((request: RequestSpec) => Envelope);
    label: string;
    paths: readonly string[];
    suffixes: readonly string[];
    nearMisses: readonly string[];
    access: fc.Arbitrary<Access>;
    numRuns: number;
  },
): Promise<void> {
  const path = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...p.paths) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...p.paths), fc.constantFrom(...p.suffixes)).map(([path, s]) => `${path}${s}`) },
    { weight: 1, arbitrary: fc.constantFrom(...p.paths).map((path) => path.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...p.nearMisses) },
  );
  const spec = fc
    .record({ method: fc.constantFrom(...METHODS), path, access: p.access, body: bodyArb(nearObject({})) })
    .map(({ method, path, access, body }): RequestSpec => ({ method, path, ...accessParts(access), ...(method === 'GET' ? {} : { body }) }));
  await assertProbes(prober, p.envelope, p.label, spec, p.numRuns);
}

/**
 * After any answer, the kept-alive connection serves the next request (`Prober.reuse`): any of `routes`,
 * any credentials from `access`, a filler body of any size class or a body shaped like `fields`.
 */
export async function assertKeepAlive(
  prober: Prober,
  p: { routes: ReadonlyArray<readonly [string, string]>; access: fc.Arbitrary<Access>; fields: Record<string, fc.Arbitrary<unknown>>; numRuns: number },
): Promise<void> {
  const spec = fc
    .record({ route: fc.constantFrom(...p.routes), access: p.access, body: fc.oneof(fillerArb, bodyArb(nearObject(p.fields))) })
    .map(({ route: [method, path], access, body }): RequestSpec => ({ method, path, ...accessParts(access), body }));
  await fc.assert(
    fc.asyncProperty(spec, async (request) => {
      await prober.reuse('keep-alive: request, then GET /health', request);
    }),
    runs(p.numRuns, 15_000),
  );
}

// ───────────────────────────── raw keep-alive exchange ─────────────────────────────

export type RawResponse = { status: number; headers: Record<string, string>; body: Buffer };

/** One complete HTTP/1.1 response at the start of `buf` (Content-Length or chunked), and what follows it. */
function parseResponse(buf: Buffer): { response: RawResponse; rest: Buffer } | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(statusLine!.split(' ')[1]);
  const rest = buf.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const chunks: Buffer[] = [];
    let offset = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', offset);
      if (lineEnd < 0) return null;
      const size = parseInt(rest.subarray(offset, lineEnd).toString('latin1'), 16);
      if (size === 0) {
        const trailerEnd = rest.indexOf('\r\n\r\n', lineEnd);
        return trailerEnd < 0 ? null : { response: { status, headers, body: Buffer.concat(chunks) }, rest: rest.subarray(trailerEnd + 4) };
      }
      if (rest.length < lineEnd + 2 + size + 2) return null;
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      offset = lineEnd + 2 + size + 2;
    }
  }
  const length = Number(headers['content-length'] ?? 0);
  if (rest.length < length) return null;
  return { response: { status, headers, body: rest.subarray(0, length) }, rest: rest.subarray(length) };
}

/** Time for the first answer, and for the answer to the next request on the same connection (GET /health). */
const FIRST_ANSWER_MS = 5_000;
const NEXT_ANSWER_MS = 1_000;

/**
 * Writes `first` on a new connection, waits for its answer, then writes `second` on the same connection and
 * waits for that answer. `error` says what went wrong, if anything.
 */
export function keepAliveExchange(
  port: number,
  first: Buffer,
  second: Buffer,
): Promise<{ first?: RawResponse; second?: RawResponse; error?: string }> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let buffered: Buffer = Buffer.alloc(0);
    let answer: RawResponse | undefined;
    let settled = false;
    const started = Date.now();
    let answeredAt = 0;
    const finish = (result: { first?: RawResponse; second?: RawResponse; error?: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    let timer = setTimeout(() => finish({ error: `no answer within ${FIRST_ANSWER_MS} ms` }), FIRST_ANSWER_MS);
    socket.on('error', (err: NodeJS.ErrnoException) =>
      finish({
        first: answer,
        error: answer
          ? `the next request on the kept-alive connection got no answer: ${err.code ?? err.message} ${Date.now() - answeredAt} ms after it was sent`
          : `no answer: ${err.code ?? err.message} after ${Date.now() - started} ms`,
      }),
    );
    socket.on('close', () =>
      finish({
        first: answer,
        error: answer
          ? `the server closed the kept-alive connection (no Connection: close) without answering the next request, ${Date.now() - answeredAt} ms after it was sent`
          : 'the connection closed without an answer',
      }),
    );
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      const parsed = parseResponse(buffered);
      if (!parsed) return;
      buffered = parsed.rest;
      if (answer) return finish({ first: answer, second: parsed.response });
      answer = parsed.response;
      if (/close/i.test(answer.headers.connection ?? '')) return finish({ first: answer });
      clearTimeout(timer);
      answeredAt = Date.now();
      timer = setTimeout(
        () => finish({ first: answer, error: `the next request on the kept-alive connection got no answer within ${NEXT_ANSWER_MS} ms` }),
        NEXT_ANSWER_MS,
      );
      socket.write(second);
    });
    socket.on('connect', () => socket.write(first));
  });
}
