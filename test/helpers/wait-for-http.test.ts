import { createServer } from 'node:http';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { freePort, runEntry, waitForHttp } from './processes.js';

/** A child that lives and says something on stderr, but serves nothing. */
const silentChild = () =>
  runEntry('-e', {}, { compiled: true, args: ["process.stderr.write('still migrating the database\\n'); setInterval(() => {}, 1000)"] });

describe('waiting for a child process to answer', () => {
  it('fails, when the child lives but nothing listens, with the connection error and what the child said last', async () => {
    const child = silentChild();
    try {
      while (!child.stderr()) await new Promise((resolve) => setTimeout(resolve, 20));
      const port = await freePort();
      await expect(waitForHttp(`http://127.0.0.1:${port}/ready`, child, 600)).rejects.toThrow(
        /did not answer within 600 ms \(last: ECONNREFUSED\)\nstill migrating the database/,
      );
    } finally {
      await child.stop();
    }
  });

  it('fails, when the answer is never a 200, with the last status', async () => {
    const child = silentChild();
    const server = createServer((_req, res) => res.writeHead(503).end()).listen(await freePort(), '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as { port: number };
      await expect(waitForHttp(`http://127.0.0.1:${port}/ready`, child, 600)).rejects.toThrow(/\(last: status 503\)/);
    } finally {
      server.close();
      await child.stop();
    }
  });
});
