import type { AssetUrl } from '../../http/urls.js';
import { moneyNumber } from '../../lib/money.js';
import { isoMicros } from '../../lib/time.js';
import type { LicenseAccount, LicenseItem, LicensePurchase } from './service.js';


/** Account (spec §2, Interface B `data`). */
export function presentAccount(account: LicenseAccount, asset: AssetUrl) {
  return {
    name: {
      firstname: account.firstname,
      lastname: account.lastname,
      full_name: `${account.firstname} ${account.lastname}`.trim(),
    },
    username: account.username,
    email: account.email ?? '',
    balance: moneyNumber(account.balance),
    currency: account.currency,
    profile: {
      heading: account.profileHeading ?? '',
      description: account.profileDescription ?? '',
      contact: { email: account.contactEmail ?? account.email ?? '' },
      social_links: account.socialLinks,
      media: { avatar: asset(account.avatar), cover: asset(account.cover) },
    },
    registered_at: isoMicros(account.createdAt),
  };
}

/**
 * Item media by kind: `preview_image` for every kind but audio, `preview_video` only for video,
 * `preview_audio` only for audio, `screenshots` only when there are some.
 */
function presentMedia(item: LicenseItem, asset: AssetUrl) {
  return {
    thumbnail: asset(item.thumbnail),
    ...(item.mediaKind !== 'audio' ? { preview_image: asset(item.previewImage) } : {}),
    ...(item.mediaKind === 'video' ? { preview_video: asset(item.previewVideo) } : {}),
    ...(item.mediaKind === 'audio' ? { preview_audio: asset(item.previewAudio) } : {}),
    ...(item.screenshots.length ? { screenshots: item.screenshots.map((path) => asset(path)) } : {}),
  };
}

/** Item (spec §2). */
export function presentItem(item: LicenseItem, asset: AssetUrl) {
  return {
    id: item.id,
    name: item.name,
    description: item.description,
    category: item.category,
    sub_category: item.subCategory,
    options: item.options,
    version: item.version,
    demo_link: item.demoLink,
    tags: item.tags,
    media: presentMedia(item, asset),
    price: { regular: moneyNumber(item.priceRegular), extended: moneyNumber(item.priceExtended) },
    currency: item.currency,
    published_at: isoMicros(item.publishedAt),
  };
}

/** Purchase (spec §2): `purchase_code` echoes the validated code; `supported_until` is omitted when support is disabled. */
export function presentPurchase(purchaseCode: string, purchase: LicensePurchase, item: LicenseItem, asset: AssetUrl) {
  return {
    purchase_code: purchaseCode,
    license_type: purchase.licenseType,
    price: moneyNumber(purchase.price),
    currency: purchase.currency,
    item: presentItem(item, asset),
    ...(purchase.supportedUntil ? { supported_until: isoMicros(purchase.supportedUntil) } : {}),
    downloaded: purchase.downloaded,
    date: isoMicros(purchase.purchasedAt),
  };
}
