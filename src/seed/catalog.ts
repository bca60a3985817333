import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import {
  campaignCardServices,
  campaigns,
  campaignTopUpServices,
  cardCodes,
  cardServices,
  cards,
  categories,
  gateways,
  reviews,
  topUpServices,
  topUps,
  type CategoryType,
  type DiscountType,
  type OrderField,
  type ProductKind,
} from '../db/schema.js';
import type { Config } from '../env.js';
import { hmacSha256 } from '../lib/crypto.js';
import { utcToday } from '../lib/time.js';
import { createAccount } from '../modules/accounts/service.js';
import { toSnapshot } from '../modules/catalog/pricing.js';
import { sealCode } from '../modules/inventory/codes.js';
import { refreshRatings } from '../modules/reviews/service.js';

type DemoService = {
  name: string;
  price: string;
  discount?: string;
  discountType?: DiscountType;
  status?: number;
  /** Campaign pricing: the service is a member of the demo campaign. */
  campaign?: { price: string; discount: string; discountType: DiscountType; maxSell: number };
};

type DemoProduct = { category: string; name: string; slug: string; region: string; description: string; guide: string; services: DemoService[] };

const CATEGORIES: Array<{ key: string; name: string; icon: string; type: CategoryType }> = [
  { key: 'mobile', name: 'Mobile Games', icon: 'fas fa-mobile-alt', type: 'top_up' },
  { key: 'pc', name: 'PC & Console Games', icon: 'fas fa-desktop', type: 'top_up' },
  { key: 'gift', name: 'Gift Cards', icon: 'fas fa-gift', type: 'card' },
  { key: 'console', name: 'Console Cards', icon: 'fas fa-gamepad', type: 'card' },
];

const text = (value: string, name: string, placeholder: string, note: string): OrderField => ({
  field_value: value,
  field_name: name,
  field_placeholder: placeholder,
  field_note: note,
  field_type: 'text',
});

const select = (value: string, name: string, note: string, option: Record<string, string>): OrderField => ({
  field_value: value,
  field_name: name,
  field_placeholder: `Select your ${value.toLowerCase()}`,
  field_note: note,
  field_type: 'select',
  option,
});

const TOP_UPS: Array<DemoProduct & { orderFields: OrderField[] }> = [
  {
    category: 'mobile',
    name: 'PUBG Mobile',
    slug: 'pubg-mobile',
    region: 'Global',
    description: '<p>Unknown Cash (UC) for PUBG Mobile, credited straight to your account.</p>',
    guide: '<p>Open your profile in the game and copy the Player ID under your name.</p>',
    orderFields: [
      text('Player ID', 'player_id', 'Enter your Player ID', 'Shown under your name in the game profile'),
      select('Server', 'server', 'The server your character plays on', { global: 'Global', kr: 'Korea', vn: 'Vietnam' }),
    ],
    services: [
      { name: '60 UC', price: '0.99' },
      { name: '325 UC', price: '4.99' },
      { name: '660 UC', price: '9.99', discount: '5', discountType: 'percentage', campaign: { price: '9.99', discount: '15', discountType: 'percentage', maxSell: 100 } },
      { name: '1800 UC', price: '24.99' },
      { name: '3850 UC', price: '49.99', discount: '2.00', discountType: 'flat' },
    ],
  },
  {
    category: 'mobile',
    name: 'Mobile Legends: Bang Bang',
    slug: 'mobile-legends',
    region: 'Southeast Asia',
    description: '<p>Diamonds for Mobile Legends: Bang Bang.</p>',
    guide: '<p>Tap your avatar: the User ID and the Zone ID are shown as <em>12345678 (1234)</em>.</p>',
    orderFields: [
      text('User ID', 'user_id', 'Enter your User ID', 'The number before the brackets'),
      text('Zone ID', 'zone_id', 'Enter your Zone ID', 'The number inside the brackets'),
      select('Region', 'region', 'Where your account was created', { sea: 'Southeast Asia', global: 'Global' }),
    ],
    services: [
      { name: '86 Diamonds', price: '1.49' },
      { name: '172 Diamonds', price: '2.99', campaign: { price: '2.49', discount: '0.00', discountType: 'flat', maxSell: 80 } },
      { name: '257 Diamonds', price: '4.49', discount: '0.30', discountType: 'flat' },
      { name: 'Weekly Diamond Pass', price: '1.99' },
    ],
  },
  {
    category: 'pc',
    name: 'Genshin Impact',
    slug: 'genshin-impact',
    region: 'Global',
    description: '<p>Genesis Crystals and the Blessing of the Welkin Moon.</p>',
    guide: '<p>Your UID is shown at the bottom right of the game screen.</p>',
    orderFields: [
      text('UID', 'uid', 'Enter your UID', 'Nine digits, bottom right of the screen'),
      select('Server', 'server', 'The server of your account', { america: 'America', europe: 'Europe', asia: 'Asia', tw_hk_mo: 'TW, HK, MO' }),
    ],
    services: [
      { name: '60 Genesis Crystals', price: '0.99' },
      { name: '330 Genesis Crystals', price: '4.99' },
      { name: '1090 Genesis Crystals', price: '14.99', discount: '10', discountType: 'percentage' },
      { name: 'Blessing of the Welkin Moon', price: '4.99' },
    ],
  },
  {
    category: 'pc',
    name: 'Valorant',
    slug: 'valorant',
    region: 'Europe',
    description: '<p>Valorant Points for skins, passes and agents.</p>',
    guide: '<p>Enter your Riot ID with its tagline, e.g. <em>Player#EUW</em>.</p>',
    orderFields: [
      text('Riot ID', 'riot_id', 'Player#TAG', 'Your name and tagline'),
      select('Region', 'region', 'The region of your Riot account', { eu: 'Europe', tr: 'Turkey', ru: 'CIS' }),
    ],
    services: [
      { name: '475 VP', price: '4.99' },
      { name: '1000 VP', price: '9.99' },
      { name: '2050 VP', price: '19.99', discount: '1.00', discountType: 'flat' },
    ],
  },
];

const CARDS: DemoProduct[] = [
  {
    category: 'gift',
    name: 'Steam Wallet Card (US)',
    slug: 'steam-wallet-us',
    region: 'United States',
    description: '<p>Add funds to your Steam Wallet.</p>',
    guide: '<p>In Steam, open <em>Redeem a Steam Wallet Code</em> and enter the code.</p>',
    services: [
      { name: 'Steam $10', price: '10.00' },
      { name: 'Steam $20', price: '20.00', campaign: { price: '20.00', discount: '10', discountType: 'percentage', maxSell: 50 } },
      { name: 'Steam $50', price: '50.00', discount: '2', discountType: 'percentage' },
      { name: 'Steam $100', price: '100.00', status: 0 },
    ],
  },
  {
    category: 'gift',
    name: 'Google Play Gift Card (US)',
    slug: 'google-play-us',
    region: 'United States',
    description: '<p>Credit for apps, games, movies and books on Google Play.</p>',
    guide: '<p>Open the Play Store, tap your profile, then <em>Payments &amp; subscriptions → Redeem code</em>.</p>',
    services: [
      { name: 'Google Play $10', price: '10.00' },
      { name: 'Google Play $25', price: '25.00', discount: '0.50', discountType: 'flat' },
      { name: 'Google Play $50', price: '50.00' },
    ],
  },
  {
    category: 'console',
    name: 'PlayStation Store Card (US)',
    slug: 'playstation-store-us',
    region: 'United States',
    description: '<p>Wallet funds for the PlayStation Store.</p>',
    guide: '<p>On your console, open the PlayStation Store and choose <em>Redeem codes</em>.</p>',
    services: [
      { name: 'PSN $10', price: '10.00' },
      { name: 'PSN $25', price: '25.00' },
      { name: 'PSN $50', price: '50.00', discount: '3', discountType: 'percentage' },
      { name: 'PSN $100', price: '100.00' },
    ],
  },
  {
    category: 'console',
    name: 'Xbox Game Pass Ultimate',
    slug: 'xbox-game-pass-ultimate',
    region: 'Global',
    description: '<p>Hundreds of games on console, PC and cloud.</p>',
    guide: '<p>Redeem at <em>redeem.microsoft.com</em> with your Microsoft account.</p>',
    services: [
      { name: '1 Month', price: '16.99' },
      { name: '3 Months', price: '49.99', discount: '5.00', discountType: 'flat' },
    ],
  },
];

const REVIEWERS = [
  { firstname: 'Lina', lastname: 'Park', username: 'lina.park', email: 'lina.park@example.com' },
  { firstname: 'Omar', lastname: 'Haddad', username: 'omar.haddad', email: 'omar.haddad@example.com' },
  { firstname: 'Sofia', lastname: 'Rossi', username: 'sofia.rossi', email: 'sofia.rossi@example.com' },
];

/** [reviewer index, product slug, rating, comment, hours ago] */
const REVIEWS: Array<[number, string, number, string, number]> = [
  [0, 'pubg-mobile', 5, 'UC arrived within a minute. Great prices.', 70],
  [1, 'pubg-mobile', 4, 'Fast delivery, the campaign price was a nice surprise.', 30],
  [2, 'pubg-mobile', 5, 'Third order here, always smooth.', 5],
  [0, 'mobile-legends', 4, 'Diamonds came quickly, Zone ID hint helped.', 50],
  [2, 'genshin-impact', 5, 'Welkin Moon activated right away.', 20],
  [1, 'steam-wallet-us', 5, 'Code worked on the first try.', 40],
  [2, 'steam-wallet-us', 4, 'Good discount on the $20 card.', 12],
  [0, 'playstation-store-us', 3, 'Worked, but I had to wait for a restock.', 8],
];

const shiftDays = (days: number) => utcToday(new Date(Date.now() + days * 86_400_000));

/** Stable demo codes per service and position, e.g. `STEA-7F3A-91C2-0B5D`. */
function demoCode(config: Config, slug: string, service: string, n: number): string {
  const hex = hmacSha256(config.codeEncryptionKey, `demo-code:${slug}:${service}:${n}`).toString('hex').toUpperCase();
  const prefix = slug.replace(/[^a-z]/g, '').slice(0, 4).toUpperCase();
  return `${prefix}-${hex.slice(0, 4)}-${hex.slice(4, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}`;
}

/** The service row values: while in the campaign, its own pricing waits in old_data (C9). */
function serviceValues(s: DemoService, i: number, imageDir: string, slug: string) {
  const own = { price: s.price, discount: s.discount ?? '0.00', discountType: s.discountType ?? ('flat' as const) };
  const base = {
    name: s.name,
    image: `${imageDir}/${slug}-${i + 1}.webp`,
    status: s.status ?? 1,
    sortBy: i + 1,
  };
  if (!s.campaign) return { ...base, ...own };
  const c = s.campaign;
  return {
    ...base,
    price: c.price,
    discount: c.discount,
    discountType: c.discountType,
    isOffered: 1,
    maxSell: c.maxSell,
    oldData: toSnapshot(own),
    campaignData: toSnapshot(c, c.maxSell),
  };
}

const productImage = (dir: string, slug: string) => ({
  image: `${dir}/${slug}.webp`,
  image_driver: 'local',
  preview: `${dir}/${slug}-preview.webp`,
  preview_driver: 'local',
});

/**
 * Demo catalog (C14): categories of both kinds, top-ups with text and select order fields, cards whose
 * active services hold 20–200 sealed codes, a campaign running from three days ago to ten days ahead
 * (already applied to its services), gateways, and published reviews by other accounts.
 * Deterministic: the same installation key gives the same codes.
 */
export async function seedCatalog(tx: Tx, config: Config): Promise<void> {
  const categoryIds = new Map<string, number>();
  for (const [i, c] of CATEGORIES.entries()) {
    const [row] = await tx
      .insert(categories)
      .values({ name: c.name, icon: c.icon, type: c.type, sortBy: i + 1 })
      .returning({ id: categories.id });
    categoryIds.set(c.key, row!.id);
  }

  const [campaign] = await tx
    .insert(campaigns)
    .values({ name: 'Winter Gaming Sale', startDate: shiftDays(-3), endDate: shiftDays(10), status: 1 })
    .returning({ id: campaigns.id });
  const campaignId = campaign!.id;
  const productIds = new Map<string, { kind: ProductKind; id: number }>();

  for (const t of TOP_UPS) {
    const [topUp] = await tx
      .insert(topUps)
      .values({
        categoryId: categoryIds.get(t.category)!,
        name: t.name,
        slug: t.slug,
        region: t.region,
        instantDelivery: 1,
        image: productImage('topups', t.slug),
        orderInformation: t.orderFields,
        description: t.description,
        guide: t.guide,
      })
      .returning({ id: topUps.id });
    productIds.set(t.slug, { kind: 'top_up', id: topUp!.id });
    const services = await tx
      .insert(topUpServices)
      .values(t.services.map((s, i) => ({ ...serviceValues(s, i, 'topup-services', t.slug), topUpId: topUp!.id })))
      .returning({ id: topUpServices.id });
    const members = t.services.flatMap((s, i) => (s.campaign ? [{ s: s.campaign, id: services[i]!.id }] : []));
    if (members.length) {
      await tx.insert(campaignTopUpServices).values(
        members.map(({ s, id }) => ({ campaignId, topUpServiceId: id, price: s.price, discount: s.discount, discountType: s.discountType, maxSell: s.maxSell })),
      );
    }
  }

  for (const [cardIndex, c] of CARDS.entries()) {
    const [card] = await tx
      .insert(cards)
      .values({
        categoryId: categoryIds.get(c.category)!,
        name: c.name,
        slug: c.slug,
        region: c.region,
        image: productImage('cards', c.slug),
        description: c.description,
        guide: c.guide,
        trending: cardIndex === 0 ? 1 : 0,
      })
      .returning({ id: cards.id });
    productIds.set(c.slug, { kind: 'card', id: card!.id });
    const services = await tx
      .insert(cardServices)
      .values(c.services.map((s, i) => ({ ...serviceValues(s, i, 'card-services', c.slug), cardId: card!.id })))
      .returning({ id: cardServices.id });
    for (const [i, s] of c.services.entries()) {
      const serviceId = services[i]!.id;
      if (s.campaign) {
        const m = s.campaign;
        await tx
          .insert(campaignCardServices)
          .values({ campaignId, cardServiceId: serviceId, price: m.price, discount: m.discount, discountType: m.discountType, maxSell: m.maxSell });
      }
      if ((s.status ?? 1) !== 1) continue;
      // 20–200 codes per active service, varying so stock levels differ.
      const stock = 20 + ((cardIndex * 37 + i * 53) % 181);
      const codes = Array.from({ length: stock }, (_, n) => ({ cardServiceId: serviceId, ...sealCode(config.codeEncryptionKey, demoCode(config, c.slug, s.name, n)) }));
      await tx.insert(cardCodes).values(codes);
    }
  }

  await tx.insert(gateways).values([
    {
      code: 'balance',
      name: 'Account Balance',
      sortBy: 1,
      image: 'gateways/balance.webp',
      parameters: { display_name: 'Account Balance' },
      currencies: { '0': { [config.STORE_CURRENCY]: config.STORE_CURRENCY } },
      supportedCurrency: [config.STORE_CURRENCY],
      receivableCurrencies: [receivable(config.STORE_CURRENCY, config.STORE_CURRENCY_SYMBOL, '1', '100000', '0', '0')],
      description: 'Orders are paid from your prepaid account balance.',
      currencyType: 1,
    },
    {
      code: 'stripe',
      name: 'Stripe',
      sortBy: 2,
      image: 'gateways/stripe.webp',
      parameters: { statement_descriptor: 'TOPUP STORE' },
      currencies: { '0': { USD: 'USD', EUR: 'EUR', GBP: 'GBP' } },
      supportedCurrency: ['USD', 'EUR', 'GBP'],
      receivableCurrencies: [receivable('USD', '$', '1', '10000', '2.9', '0.30'), receivable('EUR', '€', '0.92', '10000', '2.9', '0.25')],
      description: 'Top up your balance with a debit or credit card.',
      currencyType: 1,
      isSandbox: 1,
      environment: 'test',
    },
    {
      code: 'bank-transfer',
      name: 'Bank Transfer',
      sortBy: 3,
      image: 'gateways/bank-transfer.webp',
      parameters: { bank_name: 'Demo Bank' },
      currencies: { '0': { USD: 'USD' } },
      supportedCurrency: ['USD'],
      receivableCurrencies: [receivable('USD', '$', '1', '50000', '0', '1.00')],
      description: 'Manual transfer, credited after review.',
      currencyType: 1,
      isManual: 1,
      note: 'Use your username as the transfer reference.',
    },
  ]);

  const reviewerIds: number[] = [];
  for (const r of REVIEWERS) {
    const { id } = await createAccount(tx, {
      ...r,
      currency: config.STORE_CURRENCY,
      currencySymbol: config.STORE_CURRENCY_SYMBOL,
    });
    reviewerIds.push(id);
  }
  for (const [reviewer, slug, rating, comment, hoursAgo] of REVIEWS) {
    const product = productIds.get(slug)!;
    const at = sql`now() - make_interval(hours => ${hoursAgo})`;
    await tx.insert(reviews).values({
      accountId: reviewerIds[reviewer]!,
      reviewableType: product.kind,
      reviewableId: product.id,
      rating: rating.toFixed(2),
      comment,
      createdAt: at,
      updatedAt: at,
    });
  }
  for (const product of new Set(REVIEWS.map(([, slug]) => productIds.get(slug)!))) {
    await refreshRatings(tx, product.kind, product.id);
  }
}

function receivable(name: string, symbol: string, rate: string, max: string, percentage: string, fixed: string) {
  return {
    name,
    currency_symbol: symbol,
    conversion_rate: rate,
    min_limit: '1',
    max_limit: max,
    percentage_charge: percentage,
    fixed_charge: fixed,
  };
}
