import { createConnection } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageWindow } from '../../src/http/pagination.js';
import { LIMITS } from '../../src/http/server.js';
import { sha256 } from '../../src/lib/crypto.js';
import { purchaseCodeDigest } from '../../src/modules/license/service.js';
import { buyer, createTestAccount, expectJson } from '../helpers/api.js';
import { createCardService, createLicenseItem, createLicensePurchase, createOrder } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { httpAnswerComplete, sleep } from '../helpers/processes.js';

let app: TestApp;
let port: number;
beforeAll(async () => {
  app = await startTestApp();
  port = Number(new URL(app.baseUrl).port);
});
afterAll(async () => app?.close());

const admin = (path: string, body?: unknown) =>
  app.request(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { Authorization: `Bearer ${app.adminToken}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('protective headers (C3)', () => {
  it('every response says nosniff; HTML pages refuse framing; secrets are never cached', async () => {
    const keys = await createTestAccount(app);
    const responses = {
      token: await app.request('/api/generate/authorization-token', { method: 'POST', headers: { PublicKey: keys.publicKey, SecretKey: keys.secretKey } }),
      unauthenticated: await app.request('/api/get-category'),
      unknown: await app.request('/nowhere'),
      health: await app.request('/health'),
      docs: await app.request('/docs'),
      dashboard: await app.request('/admin/queues', { headers: { Authorization: `Bearer ${app.adminToken}` } }),
      newAccount: await admin('/admin/accounts', { firstname: 'New', lastname: 'Keys' }),
      rotatedKey: await admin(`/admin/accounts/${keys.id}/api-key`, {}),
      licenseB: await app.request('/license-api/account/details'),
    };
    for (const [name, response] of Object.entries(responses)) {
      expect(response.headers.get('x-content-type-options'), name).toBe('nosniff');
    }
    for (const name of ['docs', 'dashboard'] as const) {
      expect(responses[name].headers.get('content-type'), name).toContain('text/html');
      expect(responses[name].headers.get('x-frame-options'), name).toBe('DENY');
      expect(responses[name].headers.get('content-security-policy'), name).toContain("frame-ancestors 'none'");
    }
    for (const name of ['token', 'newAccount', 'rotatedKey'] as const) {
      expect(responses[name].status, name).toBe(200);
      expect(responses[name].headers.get('cache-control'), name).toBe('no-store');
    }
  });
});

type RawAnswer = { sent: number; error: string | null; answer: string };

/**
 * Sends a request the way a simple client does: the whole body first (in chunks, not too fast), and
 * only then reads the answer. A server that resets the connection mid-upload makes it fail.
 */
function uploadThenRead(head: string, bodyBytes: number, chunk = 64 * 1024): Promise<RawAnswer> {
  return new Promise((resolve) => {
    // Half-open allowed: a server that answers and half-closes leaves it sending the rest, as HTTP clients do.
    const socket = createConnection({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    let sent = 0;
    let error: string | null = null;
    const complete = () => httpAnswerComplete(answer);
    socket.on('data', (data) => {
      answer += data.toString('latin1');
      // Done once the whole answer is in and the body was sent: the connection may stay open (keep-alive).
      if (complete() && sent >= bodyBytes) socket.destroy();
    });
    socket.on('error', (err) => (error = (err as NodeJS.ErrnoException).code ?? err.message));
    socket.on('close', () => resolve({ sent, error, answer }));
    socket.write(head);
    const pump = async () => {
      while (sent < bodyBytes && !socket.destroyed) {
        const size = Math.min(chunk, bodyBytes - sent);
        if (!socket.write(Buffer.alloc(size, 120))) await new Promise((r) => socket.once('drain', r));
        sent += size;
        await sleep(15);
      }
      if (complete()) socket.destroy();
    };
    void pump();
  });
}

type Blast = { sentAtAnswer: number | null; sentInAll: number; answer: string; closedBy: 'server' | 'client' };

/**
 * Sends `head`, then up to `bodyBytes` of body as fast as the connection takes it, while reading: how much had
 * been sent when the answer arrived, and how much in all before the server closed the connection.
 */
function blast(head: string, bodyBytes: number, { chunked = false } = {}): Promise<Blast> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let answer = '';
    let sent = 0;
    let sentAtAnswer: number | null = null;
    let closedBy: Blast['closedBy'] = 'server';
    socket.on('data', (data) => {
      sentAtAnswer ??= sent;
      answer += data.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve({ sentAtAnswer, sentInAll: sent, answer, closedBy }));
    socket.write(head);
    const piece = Buffer.alloc(64 * 1024, 120);
    const frame = chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
    void (async () => {
      while (sent < bodyBytes && !socket.destroyed) {
        const ok = socket.write(frame);
        sent += piece.length;
        if (!ok) await new Promise((r) => (socket.once('drain', r), socket.once('close', r)));
      }
      // Everything went through: the server kept reading all along.
      closedBy = 'client';
      socket.destroy();
    })();
  });
}

const MB = 1024 * 1024;

describe('limits answered in the envelope, readable by the client (C2)', () => {
  it('answers 413 at once when the declared length is over the limit, on every route and both interfaces, and drops only a few MB after it', async () => {
    const a = '{"status":"failed","errors":"The request body is too large."}';
    const b = '{"status":"error","msg":"The request body is too large."}';
    for (const [path, type, size, envelope] of [
      ['/api/card/make-order', 'application/json', 100 * MB, a],
      ['/license-api/purchases/validation', 'application/json', 100 * MB, b],
      ['/api/generate/authorization-token', 'application/x-www-form-urlencoded', 100 * MB, a],
      // The code import's own limit for text/plain (100 MiB), before the admin token is even looked at.
      ['/admin/card-services/1/codes', 'text/plain', 101 * MB, a],
    ] as const) {
      const result = await blast(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ${size}\r\n\r\n`, size);
      expect(result.answer, path).toMatch(/^HTTP\/1\.1 413 /);
      expect(result.answer.endsWith(envelope), path).toBe(true);
      // What the client had sent by then sat in socket buffers: the server read nothing to decide.
      expect(result.sentAtAnswer!, path).toBeLessThan(8 * MB);
      // After the answer the server drops at most LINGER_BYTES more, then closes.
      expect(result.closedBy, path).toBe('server');
      expect(result.sentInAll, path).toBeLessThan(16 * MB);
    }
    // Interface B's in the caller's language (C12), though no route of it has run yet.
    const spanish = await blast(`POST /license-api/purchases/validation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept-Language: es\r\nContent-Length: ${100 * MB}\r\n\r\n`, 100 * MB);
    expect(spanish.answer.endsWith('{"status":"error","msg":"El cuerpo de la solicitud es demasiado grande."}')).toBe(true);
  });

  it('answers 413 to a chunked body once its count passes the limit, not at its end', async () => {
    const result = await blast(
      `POST /admin/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${app.adminToken}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
      100 * MB,
      { chunked: true },
    );
    expect(result.answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(result.sentAtAnswer!).toBeLessThan(LIMITS.MAX_BODY_BYTES + 8 * MB);
    expect(result.closedBy).toBe('server');
    expect(result.sentInAll).toBeLessThan(24 * MB);
  });

  it('reads no body before the credentials in the headers are checked: a chunked body with a wrong token gets its 401 at once', async () => {
    // The body would not end by itself: an answer that waited for it (or for a MiB of it) would never come.
    const answer = await new Promise<string>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      let text = '';
      socket.on('data', (data) => {
        text += data.toString('latin1');
        if (text.includes('}')) socket.destroy();
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve(text));
      const head = (path: string, auth: string) =>
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
      socket.write(`${head('/api/top-up/make-order', 'Bearer not-a-token')}5\r\n{"a":\r\n`);
      setTimeout(() => socket.destroy(), 5_000).unref();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toContain('"errors":"Unauthenticated."');
  });

  it('refuses on the headers alone a client that waits for 100 Continue: it never sends its body', async () => {
    const answer = await new Promise<string>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      let text = '';
      socket.on('data', (data) => {
        text += data.toString('latin1');
        if (text.includes('too large')) socket.destroy();
      });
      socket.on('close', () => resolve(text));
      socket.write(`POST /admin/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong-admin-token\r\nContent-Type: application/json\r\nContent-Length: ${100 * MB}\r\nExpect: 100-continue\r\n\r\n`);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).not.toContain('100 Continue');
  });

  it('still says 100 Continue to a client whose body a route reads', async () => {
    // Interface B takes the api key from the body too: the route reads it, so the client is told to send it.
    const body = JSON.stringify({ api_key: 'not-a-key', purchase_code: 'nothing' });
    const answer = await new Promise<string>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      let text = '';
      socket.on('data', (data) => {
        text += data.toString('latin1');
        if (text === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write(body);
        if (text.endsWith('}')) socket.destroy();
      });
      socket.on('close', () => resolve(text));
      socket.write(
        `POST /license-api/purchases/validation HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
      );
    });
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401 /);
  });

  it('a client that sends its whole body before reading still reads its 413, on both interfaces, also on a closing connection', async () => {
    const size = 3 * 1024 * 1024;
    for (const [path, envelope, connection] of [
      ['/api/card/make-order', '{"status":"failed","errors":"The request body is too large."}', 'keep-alive'],
      ['/license-api/purchases/validation', '{"status":"error","msg":"The request body is too large."}', 'keep-alive'],
      ['/api/card/make-order', '{"status":"failed","errors":"The request body is too large."}', 'close'],
    ] as const) {
      const head = `POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: ${connection}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
      const result = await uploadThenRead(head, size);
      expect(result.error, `${path} ${connection}`).toBeNull();
      expect(result.sent).toBe(size);
      expect(result.answer).toMatch(/^HTTP\/1\.1 413 /);
      expect(result.answer.endsWith(envelope)).toBe(true);
    }
  });

  it('a keep-alive connection whose requests are each refused before their body arrives holds no listener per request', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => void (warning.name === 'MaxListenersExceededWarning' && warnings.push(warning.message));
    process.on('warning', onWarning);
    const socket = createConnection({ port, host: '127.0.0.1' });
    let received = '';
    socket.on('data', (data) => (received += data.toString('latin1')));
    try {
      for (let n = 1; n <= 15; n++) {
        // The headers alone: the answer (401) comes before the body, which follows it and is dropped.
        socket.write('POST /admin/accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong-admin-token\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n');
        while ((received.match(/HTTP\/1\.1 401/g) ?? []).length < n) await sleep(5);
        socket.write(Buffer.alloc(100, 120));
      }
      await sleep(50);
      expect(socket.destroyed, 'the connection stayed open').toBe(false);
    } finally {
      socket.destroy();
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('a known path asked with another method gets 405 naming the methods it takes, in the envelope of its interface', async () => {
    const a = await app.request('/api/card/make-order');
    expect(a.status).toBe(405);
    expect(a.headers.get('allow')).toBe('POST');
    expect(await a.json()).toEqual({ status: 'failed', errors: 'The GET method is not allowed here; use POST.' });
    const b = await app.request('/license-api/purchases/validation', { method: 'PUT' });
    expect(b.status).toBe(405);
    expect(b.headers.get('allow')).toBe('POST');
    expect(await b.json()).toEqual({ status: 'error', msg: 'This method is not allowed here: the Allow header names the ones that are.' });
    const admin = await app.request('/admin/orders/T123/refund', { method: 'DELETE', headers: { Authorization: `Bearer ${app.adminToken}` } });
    expect(admin.status).toBe(405);
    expect(admin.headers.get('allow')).toBe('POST');
    const both = await app.request('/admin/providers', { method: 'DELETE', headers: { Authorization: `Bearer ${app.adminToken}` } });
    expect(both.headers.get('allow')).toBe('GET, HEAD, POST');
    // A path no route answers stays a 404.
    expect((await app.request('/api/no-such-endpoint', { method: 'POST' })).status).toBe(404);
  });

  it('headers over the limit get 431 in the envelope, not a bare status or a reset', async () => {
    const big = 'a'.repeat(100_000);
    const a = await app.request('/api/get-category', { headers: { 'X-Big': big } });
    expect(a.status).toBe(431);
    expect(a.headers.get('content-type')).toBe('application/json');
    expect(await a.json()).toEqual({ status: 'failed', errors: 'The request headers are too large.' });
    const b = await app.request('/license-api/items/all', { headers: { 'X-Big': big } });
    expect(b.status).toBe(431);
    expect(await b.json()).toEqual({ status: 'error', msg: 'The request headers are too large.' });
  });
});

describe('page links (C11)', () => {
  it('are bounded as Laravel bounds them, whatever the number of pages', async () => {
    expect(pageWindow(1, 5)).toEqual([1, 2, 3, 4, 5]);
    expect(pageWindow(1, 13)).toHaveLength(13);
    expect(pageWindow(1, 125)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, null, 124, 125]);
    expect(pageWindow(60, 125)).toEqual([1, 2, null, 57, 58, 59, 60, 61, 62, 63, null, 124, 125]);
    expect(pageWindow(125, 125)).toEqual([1, 2, null, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125]);

    const { keys, api } = await buyer(app);
    const card = await createCardService(app.services.db);
    for (let i = 0; i < 125; i++) await createOrder(app.services.db, { accountId: keys.id, ...card });
    await app.services.db.execute(sql`update accounts set card_order_count = 125 where id = ${keys.id}`);
    const page = (await expectJson(await api.get('/api/get-card/orders?per_page=1&page=60'), 200)).message;
    expect(page.total).toBe(125);
    expect(page.links.map((l: { label: string }) => l.label)).toEqual([
      '&laquo; Previous', '1', '2', '...', '57', '58', '59', '60', '61', '62', '63', '...', '124', '125', 'Next &raquo;',
    ]);
    expect(page.links.find((l: { active: boolean }) => l.active).label).toBe('60');
    expect(page.links[3].url).toBeNull();
  });
});

describe('purchase codes at rest (C12)', () => {
  it('are stored as a keyed digest; one stored as bare SHA-256 before still validates and is re-stored keyed', async () => {
    const owner = await createTestAccount(app);
    const item = await createLicenseItem(app.services.db, owner.id, 'image');
    const code = await createLicensePurchase(app.services.db, app.services.config.codeEncryptionKey, { item, purchaseCode: 'short-code-1' });
    const key = app.services.config.codeEncryptionKey;
    const [stored] = await app.services.sql<{ code_hash: Buffer }[]>`select code_hash from license_purchases where item_id = ${item.id}`;
    expect(stored!.code_hash.equals(sha256(code))).toBe(false);
    expect(stored!.code_hash.equals(purchaseCodeDigest(key, code))).toBe(true);

    // A purchase from before: its digest is the bare SHA-256 of the code.
    await app.services.sql`update license_purchases set code_hash = ${sha256(code)} where item_id = ${item.id}`;
    const validate = () =>
      app.request('/license-api/purchases/validation', {
        method: 'POST',
        headers: { 'X-API-Key': owner.apiKey, 'Content-Type': 'application/json' },
        body: JSON.stringify({ purchase_code: code }),
      });
    expect((await expectJson(await validate(), 200)).data.purchase.purchase_code).toBe(code);
    const [upgraded] = await app.services.sql<{ code_hash: Buffer }[]>`select code_hash from license_purchases where item_id = ${item.id}`;
    expect(upgraded!.code_hash.equals(purchaseCodeDigest(key, code))).toBe(true);
    await expectJson(await validate(), 200);
  });
});
