import type { Sql } from '../../src/db/client.js';

/**
 * DESIGN §2, checked over a whole database: what a fault test or the soak run ends with. Every count
 * is a number of violations, so a healthy store reads all zeros.
 */
export type InvariantReport = {
  /** 1. A card code delivered to more than one order line (same code of a service assigned twice). */
  codesDeliveredTwice: number;
  /** 1. Lines holding more codes than they were sold, or fewer than their status says were delivered. */
  linesWithWrongCodeCount: number;
  /** 2. Services whose campaign `offered_sell` exceeds `max_sell`, or campaigns that sold more units than their cap. */
  campaignCapsExceeded: number;
  /** 3. Accounts whose balance, or test balance (C25), differs from the sum of its own ledger entries. */
  ledgerMismatches: number;
  /** 3. Orders without exactly one debit of their total, or with a refund that is not their single, bounded one. */
  orderMoneyMismatches: number;
  /** 4. Accepted utrs that are not in the database. */
  lostOrders: number;
  /** 4. Orders not where a settled store leaves them (see `unsettledOrders`). */
  unsettledOrders: number;
  /** Orders by status label, for reports. */
  ordersByStatus: Record<string, number>;
};

const count = async (sql: Sql, query: string): Promise<number> => Number((await sql.unsafe<{ n: string }[]>(query))[0]!.n);

/**
 * `accepted`: the utrs the service answered with. After the store has settled, an order is either
 * completed, refunded, `stock_short` (a card order still owed codes), or a top-up waiting for an operator.
 */
export async function checkInvariants(sql: Sql, accepted: string[] = []): Promise<InvariantReport> {
  const codesDeliveredTwice = await count(
    sql,
    `select count(*) as n from (select 1 from card_codes where order_line_id is not null
       group by card_service_id, code_digest having count(*) > 1) twice`,
  );
  const linesWithWrongCodeCount = await count(
    sql,
    `select count(*) as n from order_lines l join orders o on o.id = l.order_id
     cross join lateral (select count(*)::int as held from card_codes c where c.order_line_id = l.id) c
     where o.kind = 'card' and (c.held > l.quantity
       or (o.status in (1, 3) and c.held <> l.quantity - l.codes_owed)
       or (o.status = 1 and l.codes_owed <> 0))`,
  );
  const campaignCapsExceeded =
    (await count(sql, `select count(*) as n from card_services where offered_sell > max_sell and is_offered = 1`)) +
    (await count(sql, `select count(*) as n from top_up_services where offered_sell > max_sell and is_offered = 1`)) +
    (await count(
      sql,
      `select count(*) as n from (
         select m.max_sell, (select coalesce(sum(l.campaign_units), 0) from order_lines l join orders o on o.id = l.order_id
                             where l.campaign_id = m.campaign_id and l.card_service_id = m.card_service_id and o.status <> 2) as sold
         from campaign_card_services m
         union all
         select m.max_sell, (select coalesce(sum(l.campaign_units), 0) from order_lines l join orders o on o.id = l.order_id
                             where l.campaign_id = m.campaign_id and l.top_up_service_id = m.top_up_service_id and o.status <> 2) as sold
         from campaign_top_up_services m) caps
       where sold > max_sell`,
    ));
  const ledgerMismatches = await count(
    sql,
    `select count(*) as n from accounts a
     where a.balance <> (select coalesce(sum(amount), 0) from balance_ledger b where b.account_id = a.id and b.livemode)
        or coalesce(a.test_balance, 0) <> (select coalesce(sum(amount), 0) from balance_ledger b where b.account_id = a.id and not b.livemode)`,
  );
  const orderMoneyMismatches = await count(
    sql,
    `select count(*) as n from orders o
     cross join lateral (
       select count(*) filter (where kind = 'order_debit') as debits,
              coalesce(sum(-amount) filter (where kind = 'order_debit'), 0) as debited,
              count(*) filter (where kind = 'order_refund') as refunds,
              coalesce(sum(amount) filter (where kind = 'order_refund'), 0) as refunded
       from balance_ledger b where b.order_id = o.id) m
     where m.debits <> 1 or m.debited <> o.total or m.refunds > 1 or m.refunded > o.total
        or m.refunded <> o.refunded_amount or (m.refunds = 1 and o.status <> 2)`,
  );
  const known = accepted.length
    ? new Set((await sql<{ utr: string }[]>`select utr from orders where utr = any(${accepted})`).map((r) => r.utr))
    : new Set<string>();
  const lostOrders = accepted.filter((utr) => !known.has(utr)).length;
  const unsettledOrders = await count(
    sql,
    `select count(*) as n from orders o
     where not (
       o.status in (1, 2)
       or (o.status = 3 and o.kind = 'card' and exists (select 1 from order_lines l where l.order_id = o.id and l.codes_owed > 0))
       or (o.status = 0 and o.kind = 'top_up' and o.awaiting_operator_since is not null))`,
  );
  const byStatus = await sql<{ label: string; n: string }[]>`
    select case status when 0 then 'initiate' when 1 then 'completed' when 2 then 'refund' else 'stock_short' end as label,
           count(*) as n
    from orders group by 1 order by 1`;
  return {
    codesDeliveredTwice,
    linesWithWrongCodeCount,
    campaignCapsExceeded,
    ledgerMismatches,
    orderMoneyMismatches,
    lostOrders,
    unsettledOrders,
    ordersByStatus: Object.fromEntries(byStatus.map((r) => [r.label, Number(r.n)])),
  };
}

/** The violation counts alone (all zero for a healthy store). */
export const violations = ({ ordersByStatus: _ignored, ...counts }: InvariantReport) => counts;

export const NO_VIOLATIONS = {
  codesDeliveredTwice: 0,
  linesWithWrongCodeCount: 0,
  campaignCapsExceeded: 0,
  ledgerMismatches: 0,
  orderMoneyMismatches: 0,
  lostOrders: 0,
  unsettledOrders: 0,
};
