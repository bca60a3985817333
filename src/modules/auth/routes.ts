import { z } from '@hono/zod-openapi';
import { AppError, addressNotAllowed } from '../../core/errors.js';
import { clientIp } from '../../http/client-ip.js';
import { contractRouter, endpoint } from '../../http/contract.js';
import { requiredText } from '../../http/validation.js';
import { blockedForSeconds, consumeAll, type LimitCheck } from '../../lib/rate-limit.js';
import { isoMicros } from '../../lib/time.js';
import type { Services } from '../../runtime/services.js';
import { createAuthLimiters } from './limiters.js';
import { exchangeKeyPair } from './service.js';

/** A1: the key pair travels in headers (spec §5), and only here does it authenticate (C3). */
const keyPairHeaders = z.object({
  PublicKey: requiredText(512).openapi({ description: "The account's public key", example: 'pk_demo_0123456789abcdef01234567' }),
  SecretKey: requiredText(512).openapi({ description: "The account's secret key", example: 'sk_demo_0123456789abcdef0123456789abcdef01234567' }),
});

const Token = z
  .object({
    status: z.literal('success'),
    message: z.string(),
    bearer_token: z.string().openapi({ description: 'Send as `Authorization: <token>` or `Authorization: Bearer <token>`' }),
    expires_at: z.string(),
  })
  .openapi('Token', {
    example: {
      status: 'success',
      message: 'Token generated successfully.',
      bearer_token: 'H8PeGQ05M9aE7RMdDBj2HjrsxIiXBnFdBFscpE18QK4',
      expires_at: '2026-11-24T07:40:12.123456Z',
    },
  });

/** A1 POST generate/authorization-token. */
export function authRoutes(services: Services) {
  const router = contractRouter();
  const limiters = createAuthLimiters(services);

  router.openapi(
    endpoint({
      method: 'post',
      path: '/generate/authorization-token',
      summary: 'Exchange the PublicKey and SecretKey headers for a bearer token',
      tag: 'Authentication',
      headers: keyPairHeaders,
      ok: Token,
      envelope: 'whole',
      errors: [401, 403, 422, 429],
    }),
    async (c) => {
      const { PublicKey: publicKey, SecretKey: secretKey } = c.req.valid('header');
      // A public key is public: failures with it count against the address they come from, never against the key
      // alone, so nobody can lock its owner out; and an address counts only its failures with keys that do not exist,
      // so one client guessing there does not lock out every other account behind the same address.
      const address = clientIp(c);
      const withThisKey: LimitCheck = [limiters.perKeyAndAddress, publicKey, address];
      const guessingKeys: LimitCheck = [limiters.perAddress, address];
      const wait = await blockedForSeconds([withThisKey, guessingKeys]);
      if (wait > 0) throw new AppError('rate_limited', undefined, { 'Retry-After': String(wait) });

      const { db, config } = c.get('services');
      const issued = await exchangeKeyPair(db, publicKey, secretKey, config.TOKEN_TTL_SECONDS, address);
      // The right pair from an address the account does not allow is not a guess: it counts against nobody.
      if ('refused' in issued && issued.refused === 'address') throw addressNotAllowed(issued.address);
      if ('refused' in issued) {
        await consumeAll([issued.refused === 'wrong_secret' ? withThisKey : guessingKeys]);
        throw new AppError('invalid_credentials');
      }
      return c.json(
        { status: 'success' as const, message: 'Token generated successfully.', bearer_token: issued.token, expires_at: isoMicros(issued.expiresAt) },
        200,
      );
    },
  );
  return router;
}
