import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectJson } from '../helpers/api.js';
import { cliEnvOf, cliJson, runCli } from '../helpers/cli.js';
import { startTestApp, type TestApp } from '../helpers/harness.js';
import { createBuyer } from '../workers/support.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => app?.close());

const cli = (args: string[]) => runCli(args, cliEnvOf(app));

describe('webhook commands', () => {
  it("registers an endpoint for an account, which the account then sees as its own", async () => {
    const buyer = await createBuyer(app);
    const added = cliJson(await cli(['webhooks:add', String(buyer.accountId), '--url', 'https://hooks.example.com/ops', '--events', 'order.completed,order.refunded']));
    expect(added).toMatchObject({ url: 'https://hooks.example.com/ops', events: ['order.completed', 'order.refunded'], enabled: true });
    expect(added.secret).toMatch(/^whsec_/);
    const listed = cliJson(await cli(['webhooks:list', String(buyer.accountId)]));
    expect(listed).toEqual([{ ...added, secret: undefined }].map(({ secret: _secret, ...rest }) => rest));
    expect((await expectJson(await buyer.api.get('/api/webhooks'), 200)).message).toEqual(listed);
  });

  it('lists deliveries and resends one', async () => {
    const buyer = await createBuyer(app);
    const added = cliJson(await cli(['webhooks:add', String(buyer.accountId), '--url', 'https://hooks.example.com/test']));
    const queued = await expectJson(await buyer.api.postJson(`/api/webhooks/${added.id}/test`, {}), 200);
    await app.services.sql`update webhook_deliveries set status = 'failed', attempts = 8 where id = ${queued.message.delivery_id}`;
    const failed = cliJson(await cli(['webhooks:deliveries', '--status', 'failed']));
    expect(failed.data.map((d: { id: number }) => d.id)).toContain(queued.message.delivery_id);
    const resent = cliJson(await cli(['webhooks:retry', String(queued.message.delivery_id)]));
    expect(resent).toMatchObject({ id: queued.message.delivery_id, status: 'pending', type: 'webhook.test' });
  });

  it('refuses what the API refuses: an unknown account, an http URL, a bad event type', async () => {
    const buyer = await createBuyer(app);
    const unknown = await cli(['webhooks:add', '999999', '--url', 'https://hooks.example.com/x']);
    expect([unknown.code, unknown.stderr.trim()]).toEqual([1, 'No account with id 999999.']);
    const http = await cli(['webhooks:add', String(buyer.accountId), '--url', 'http://hooks.example.com/x']);
    expect([http.code, http.stderr.trim()]).toEqual([1, 'The url must use https.']);
    const event = await cli(['webhooks:add', String(buyer.accountId), '--url', 'https://hooks.example.com/x', '--events', 'order.shipped']);
    expect(event.code).toBe(1);
    expect(event.stderr).toContain('must be one of order.completed, order.stock_short, order.refunded.');
    expect((await expectJson(await buyer.api.get('/api/webhooks'), 200)).message).toEqual([]);
  });
});
