import { and, eq, getTableName, isNull, sql } from 'drizzle-orm';
import {
  accounts,
  campaignCardServices,
  campaignTopUpServices,
  cardServices,
  cards,
  categories,
  orderLines,
  priceTierPrices,
  topUpServices,
  topUps,
  type ProductKind,
} from './schema.js';

/**
 * The two kinds of product and the tables each one lives in: the one place that knows that a top-up's
 * services are `top_up_services`, that a card order line names its service in `card_service_id`, and so on.
 */
export const PRODUCT_KINDS = {
  top_up: {
    /** The kind as messages name it. */
    words: 'top-up',
    product: topUps,
    service: topUpServices,
    /** The product a service belongs to. */
    serviceProduct: topUpServices.topUpId,
    /** The service an order line is for. */
    lineService: orderLines.topUpServiceId,
    /** The service a price tier's own price is for (C24). */
    tierService: priceTierPrices.topUpServiceId,
    members: campaignTopUpServices,
    memberService: campaignTopUpServices.topUpServiceId,
    /** The account's count of orders of this kind (the order lists' totals). */
    orderCount: accounts.topUpOrderCount,
  },
  card: {
    words: 'card',
    product: cards,
    service: cardServices,
    serviceProduct: cardServices.cardId,
    lineService: orderLines.cardServiceId,
    tierService: priceTierPrices.cardServiceId,
    members: campaignCardServices,
    memberService: campaignCardServices.cardServiceId,
    orderCount: accounts.cardOrderCount,
  },
} as const;

export type KindTables = (typeof PRODUCT_KINDS)[ProductKind];

/** `status` of a product, service, category or gateway that is shown and sold. */
export const ACTIVE = 1;

/**
 * A product clients see and may order: active, not deleted, in an active category. The one condition the
 * catalog, placement and reviews share, so deactivating a category takes its products out everywhere.
 */
export const liveProduct = (kind: ProductKind) => {
  const { product } = PRODUCT_KINDS[kind];
  return and(
    eq(product.status, ACTIVE),
    isNull(product.deletedAt),
    sql`exists (select 1 from ${categories} c where c.id = ${product.categoryId} and c.status = ${ACTIVE})`,
  );
};

/** Table and column names for statements written as SQL text. */
export const names = (kind: ProductKind) => {
  const k = PRODUCT_KINDS[kind];
  return { services: getTableName(k.service), lineService: k.lineService.name, orderCount: k.orderCount.name };
};
