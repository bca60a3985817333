import { z } from '@hono/zod-openapi';
import { id, optionalText, requiredText, text } from '../../http/validation.js';

/** The api key may also come as a body field, `X-API-Key` or `Authorization: Bearer` (C12). */
const apiKey = z.string().optional().openapi({ description: 'The account api key (or send X-API-Key / Authorization: Bearer)' });

export const apiKeyQuery = z.object({ api_key: apiKey });

export const itemQuery = z.object({ api_key: apiKey, item_id: id() });

export const validationBody = z.object({ api_key: apiKey, purchase_code: requiredText(200) });

// ── operator requests (C13 envelope, C4 messages) ──

const listError = { error: 'must be a list of strings.' };
const textList = z.array(text(500).min(1, listError), listError).optional();

/** Money as a JSON number or a numeric string, at most 2 decimals, not negative. */
const money = () =>
  z.preprocess(
    (v) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(2) : v === '' ? undefined : v),
    z.string({ error: 'must be a number.' }).trim().regex(/^\d{1,12}(\.\d{1,2})?$/, { error: 'must be a non-negative amount with at most 2 decimals.' }),
  );

const isoTimestamp = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 timestamp.' });

export const createItemBody = z
  .object({
    account_id: id(),
    name: requiredText(200),
    description: optionalText(20000),
    category: requiredText(120),
    sub_category: optionalText(120),
    options: textList,
    version: requiredText(40).pipe(z.string().regex(/^\d+(\.\d+)*$/, { error: 'must be a dotted version number.' })),
    demo_link: optionalText(2000).pipe(z.url({ error: 'must be a valid URL.' }).optional()),
    tags: textList,
    media_kind: z.enum(['image', 'audio', 'video'], { error: 'must be one of image, audio, video.' }),
    thumbnail: requiredText(500),
    preview_image: optionalText(500),
    preview_video: optionalText(500),
    preview_audio: optionalText(500),
    screenshots: textList,
    price_regular: money(),
    price_extended: money(),
    currency: z.string().regex(/^[A-Z]{3}$/, { error: 'must be a 3-letter ISO currency code.' }).optional(),
    published_at: isoTimestamp.optional(),
  })
  // Each kind needs its own preview (spec §2 Item media).
  .superRefine((item, ctx) => {
    const needed = { image: 'preview_image', audio: 'preview_audio', video: 'preview_video' } as const;
    const field = needed[item.media_kind];
    if (!item[field]) ctx.addIssue({ code: 'custom', path: [field], message: 'is required.' });
  });

export const createPurchaseBody = z.object({
  item_id: id(),
  purchase_code: optionalText(200).pipe(z.string().min(8, { error: 'must be at least 8 characters.' }).optional()),
  license_type: optionalText(40),
  price: money().optional(),
  supported_until: isoTimestamp.nullable().optional(),
  downloaded: z.boolean({ error: 'must be true or false.' }).optional(),
});

export const accountIdParam = z.object({ id: id() });
