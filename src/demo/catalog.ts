/**
 * The demo store (C14): what `npm start` loads into an empty database. Data only; src/seed/catalog.ts
 * writes it. Edit here to change what a new installation shows.
 */
import type { CategoryType, DiscountType, gateways, OrderField } from '../db/schema.js';

export type DemoService = {
  name: string;
  price: string;
  discount?: string;
  discountType?: DiscountType;
  status?: number;
  /** Campaign pricing: the service is a member of the demo campaign. */
  campaign?: { price: string; discount: string; discountType: DiscountType; maxSell: number };
};

export type DemoProduct = { category: string; name: string; slug: string; region: string; description: string; guide: string; services: DemoService[] };

export type DemoTopUp = DemoProduct & { orderFields: OrderField[] };

export const DEMO_CATEGORIES: Array<{ key: string; name: string; icon: string; type: CategoryType }> = [
  { key: 'mobile', name: 'Mobile Games', icon: 'fas fa-mobile-alt', type: 'top_up' },
  { key: 'pc', name: 'PC & Console Games', icon: 'fas fa-desktop', type: 'top_up' },
  { key: 'gift', name: 'Gift Cards', icon: 'fas fa-gift', type: 'card' },
  { key: 'console', name: 'Console Cards', icon: 'fas fa-gamepad', type: 'card' },
];

/** The campaign its members' `campaign` pricing belongs to, dated relative to the day of seeding. */
export const DEMO_CAMPAIGN = { name: 'Winter Gaming Sale', startsInDays: -3, endsInDays: 10 };

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

export const DEMO_TOP_UPS: DemoTopUp[] = [
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

/** The first card is trending. Active card services get 20–200 codes each. */
export const DEMO_CARDS: DemoProduct[] = [
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

/** Payment gateways shown by the catalog; the balance gateway takes the store currency. */
export const demoGateways = (currency: string, symbol: string): Array<typeof gateways.$inferInsert> => [
    {
      code: 'balance',
      name: 'Account Balance',
      sortBy: 1,
      image: 'gateways/balance.webp',
      parameters: { display_name: 'Account Balance' },
      currencies: { '0': { [currency]: currency } },
      supportedCurrency: [currency],
      receivableCurrencies: [receivable(currency, symbol, '1', '100000', '0', '0')],
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
];

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

export const DEMO_REVIEWERS = [
  { firstname: 'Lina', lastname: 'Park', username: 'lina.park', email: 'lina.park@example.com' },
  { firstname: 'Omar', lastname: 'Haddad', username: 'omar.haddad', email: 'omar.haddad@example.com' },
  { firstname: 'Sofia', lastname: 'Rossi', username: 'sofia.rossi', email: 'sofia.rossi@example.com' },
];

/** [reviewer index, product slug, rating, comment, hours ago] */
export const DEMO_REVIEWS: Array<[number, string, number, string, number]> = [
  [0, 'pubg-mobile', 5, 'UC arrived within a minute. Great prices.', 70],
  [1, 'pubg-mobile', 4, 'Fast delivery, the campaign price was a nice surprise.', 30],
  [2, 'pubg-mobile', 5, 'Third order here, always smooth.', 5],
  [0, 'mobile-legends', 4, 'Diamonds came quickly, Zone ID hint helped.', 50],
  [2, 'genshin-impact', 5, 'Welkin Moon activated right away.', 20],
  [1, 'steam-wallet-us', 5, 'Code worked on the first try.', 40],
  [2, 'steam-wallet-us', 4, 'Good discount on the $20 card.', 12],
  [0, 'playstation-store-us', 3, 'Worked, but I had to wait for a restock.', 8],
];
