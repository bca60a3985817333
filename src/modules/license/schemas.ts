import { z } from '@hono/zod-openapi';
import { EXAMPLE_CURRENCY, EXAMPLE_TIMESTAMP, exampleAsset } from '../../http/examples.js';
import { id, idParam, optionalText, requiredText, text } from '../../http/validation.js';
import { moneyNumber } from '../../lib/money.js';
import { DEMO_ITEMS, DEMO_PROFILE } from '../../demo/license.js';

/**
 * The api key may come as query `api_key`, body field `api_key`, `X-API-Key` or `Authorization: Bearer` (C12);
 * requireApiKey reads it from wherever it is, before the fields are validated.
 */
const apiKey = z.unknown().optional().openapi({ type: 'string', description: 'The account api key (or send X-API-Key / Authorization: Bearer)' });

/** A purchase code in the shape of the demo's (8-4-4-4-12 hex digits). */
const EXAMPLE_PURCHASE_CODE = '9c7c542d-4820-e23f-2284-50235b8a0a6e';

export const apiKeyQuery = z.object({ api_key: apiKey });

export const itemQuery = z.object({ api_key: apiKey, item_id: id().openapi({ example: 1 }) });

/** B4: the code in the body (JSON or form) or in the query. */
export const validationQuery = z.object({ api_key: apiKey, purchase_code: optionalText(200) });
export const validationBody = z.object({ api_key: apiKey, purchase_code: optionalText(200) }).openapi({ example: { purchase_code: EXAMPLE_PURCHASE_CODE } });

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

export const accountIdParam = idParam('account');

// ───────────────────────────── responses (spec §2, Interface B) ─────────────────────────────

const timestamp = z.string().openapi({ example: EXAMPLE_TIMESTAMP });

// Examples: the demo author (src/demo/license.ts) and the first of their items, bought with the demo purchase code.
const [aurora] = DEMO_ITEMS;
const auroraItem = {
  id: 1,
  name: aurora!.name,
  description: aurora!.description ?? '',
  category: aurora!.category,
  sub_category: aurora!.subCategory ?? '',
  options: aurora!.options ?? [],
  version: aurora!.version,
  demo_link: aurora!.demoLink ?? '',
  tags: aurora!.tags ?? [],
  media: {
    thumbnail: exampleAsset(aurora!.thumbnail),
    preview_image: exampleAsset(aurora!.previewImage ?? ''),
    screenshots: (aurora!.screenshots ?? []).map(exampleAsset),
  },
  price: { regular: moneyNumber(aurora!.priceRegular), extended: moneyNumber(aurora!.priceExtended) },
  currency: EXAMPLE_CURRENCY.currency,
  published_at: EXAMPLE_TIMESTAMP,
};

export const LicenseAccount = z
  .object({
    name: z.object({ firstname: z.string(), lastname: z.string(), full_name: z.string() }),
    username: z.string(),
    email: z.string(),
    balance: z.number(),
    currency: z.string(),
    profile: z.object({
      heading: z.string(),
      description: z.string(),
      contact: z.object({ email: z.string() }),
      social_links: z.record(z.string(), z.string()),
      media: z.object({ avatar: z.string(), cover: z.string() }),
    }),
    registered_at: timestamp,
  })
  .openapi('LicenseAccount', {
    example: {
      name: { firstname: 'Demo', lastname: 'Reseller', full_name: 'Demo Reseller' },
      username: 'demo',
      email: 'demo@example.com',
      balance: 100000,
      currency: EXAMPLE_CURRENCY.currency,
      profile: {
        heading: DEMO_PROFILE.profileHeading,
        description: DEMO_PROFILE.profileDescription,
        contact: { email: 'demo@example.com' },
        social_links: DEMO_PROFILE.socialLinks,
        media: { avatar: exampleAsset(DEMO_PROFILE.avatar), cover: exampleAsset(DEMO_PROFILE.cover) },
      },
      registered_at: EXAMPLE_TIMESTAMP,
    },
  });

export const Item = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    category: z.string(),
    sub_category: z.string(),
    options: z.array(z.string()),
    version: z.string(),
    demo_link: z.string(),
    tags: z.array(z.string()),
    media: z.object({
      thumbnail: z.string(),
      preview_image: z.string().optional().openapi({ description: 'Absent for audio items' }),
      preview_video: z.string().optional().openapi({ description: 'Video items only' }),
      preview_audio: z.string().optional().openapi({ description: 'Audio items only' }),
      screenshots: z.array(z.string()).optional().openapi({ description: 'Only when the item has screenshots' }),
    }),
    price: z.object({ regular: z.number(), extended: z.number() }),
    currency: z.string(),
    published_at: timestamp,
  })
  .openapi('Item', { example: auroraItem });

export const Purchase = z
  .object({
    purchase_code: z.string(),
    license_type: z.string(),
    price: z.number(),
    currency: z.string(),
    item: Item,
    supported_until: timestamp.optional().openapi({ description: 'Omitted when support is disabled' }),
    downloaded: z.boolean(),
    date: timestamp,
  })
  .openapi('Purchase', {
    example: {
      purchase_code: EXAMPLE_PURCHASE_CODE,
      license_type: 'Regular',
      price: auroraItem.price.regular,
      currency: EXAMPLE_CURRENCY.currency,
      item: auroraItem,
      supported_until: '2027-05-25T07:40:12.123456Z',
      downloaded: true,
      date: EXAMPLE_TIMESTAMP,
    },
  });
