import { eq } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import { accounts } from '../db/schema.js';
import type { Config } from '../env.js';
import { createItem, createPurchase, type NewLicenseItem } from '../modules/license/service.js';

type DemoItem = Omit<NewLicenseItem, 'accountId' | 'currency'>;

const DEMO_ITEMS: DemoItem[] = [
  {
    name: 'Aurora Landing Page Kit',
    description: 'A responsive landing page kit with light and dark themes.',
    category: 'Site Templates',
    subCategory: 'Landing Pages',
    options: ['Light theme', 'Dark theme', 'RTL support'],
    version: '2.4.1',
    demoLink: 'https://demo.example.com/aurora',
    tags: ['landing', 'responsive', 'bootstrap'],
    mediaKind: 'image',
    thumbnail: 'license/aurora/thumbnail.jpg',
    previewImage: 'license/aurora/preview.jpg',
    screenshots: ['license/aurora/screen-1.jpg', 'license/aurora/screen-2.jpg', 'license/aurora/screen-3.jpg'],
    priceRegular: '24.00',
    priceExtended: '120.00',
  },
  {
    name: 'Upbeat Corporate Track',
    description: 'A motivating corporate background track, 2:45.',
    category: 'Music',
    subCategory: 'Corporate',
    options: ['WAV', 'MP3', 'Loop version'],
    version: '1.0',
    demoLink: 'https://demo.example.com/upbeat',
    tags: ['corporate', 'upbeat', 'background'],
    mediaKind: 'audio',
    thumbnail: 'license/upbeat/thumbnail.jpg',
    previewAudio: 'license/upbeat/preview.mp3',
    priceRegular: '19.00',
    priceExtended: '95.00',
  },
  {
    name: 'Logo Reveal Intro',
    description: 'A clean logo reveal for video editors, 4K.',
    category: 'Video Templates',
    subCategory: 'Logo Stings',
    options: ['4K', 'No plugins required'],
    version: '3.1.0',
    demoLink: 'https://demo.example.com/logo-reveal',
    tags: ['logo', 'intro', 'reveal'],
    mediaKind: 'video',
    thumbnail: 'license/logo-reveal/thumbnail.jpg',
    previewImage: 'license/logo-reveal/preview.jpg',
    previewVideo: 'license/logo-reveal/preview.mp4',
    priceRegular: '29.00',
    priceExtended: '150.00',
  },
];

/**
 * Demo license items of each media kind (C14), the demo account's public profile, and purchases:
 * `purchaseCode` buys the image item with six months of support; a second purchase (of the audio
 * item, code not printed) has support disabled.
 */
export async function seedLicenseItems(tx: Tx, config: Config, ownerId: number, purchaseCode: string): Promise<void> {
  await tx
    .update(accounts)
    .set({
      profileHeading: 'Templates, music and motion graphics',
      profileDescription: 'Demo author of the license API.',
      socialLinks: { twitter: 'https://twitter.com/example', github: 'https://github.com/example' },
      avatar: 'license/profile/avatar.png',
      cover: 'license/profile/cover.jpg',
    })
    .where(eq(accounts.id, ownerId));

  const items = [];
  // One at a time, so ids follow the list order on every installation.
  for (const item of DEMO_ITEMS) items.push(await createItem(tx, { ...item, accountId: ownerId, currency: config.STORE_CURRENCY }));
  const [image, audio] = items;

  const sixMonths = new Date(Date.now() + 183 * 24 * 3600 * 1000).toISOString();
  await createPurchase(tx, config.codeEncryptionKey, { item: image!, purchaseCode, supportedUntil: sixMonths, downloaded: true });
  await createPurchase(tx, config.codeEncryptionKey, { item: audio!, supportedUntil: null });
}
