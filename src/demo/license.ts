/** The demo author's license items (one per media kind, C14) and public profile. Data only; src/seed/license.ts writes it. */
import type { NewLicenseItem } from '../db/schema.js';

export type DemoItem = Omit<NewLicenseItem, 'accountId' | 'currency'>;

export const DEMO_ITEMS: DemoItem[] = [
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

export const DEMO_PROFILE = {
  profileHeading: 'Templates, music and motion graphics',
  profileDescription: 'Demo author of the license API.',
  socialLinks: { twitter: 'https://twitter.com/example', github: 'https://github.com/example' },
  avatar: 'license/profile/avatar.png',
  cover: 'license/profile/cover.jpg',
};
