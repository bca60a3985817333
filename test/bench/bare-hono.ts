import { serve } from '@hono/node-server';
import { Hono } from 'hono';

/** The HTTP ceiling: the same server stack as the service answering a tiny JSON body, nothing else. */
const app = new Hono();
app.get('/', (c) => c.json({ status: 'success', message: { ok: true } }));
const server = serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' });
process.on('SIGTERM', () => server.close(() => process.exit(0)));
