/**
 * Who a request acts for, as every layer names it (the HTTP context, the token check, the domain's use cases): an
 * account as the one placing a request, with its id, the currency it pays in and its price tier (C24).
 */
export type Caller = {
  id: number;
  currency: string;
  currencySymbol: string;
  priceTierId: number | null;
  /** The scope of the key its token was exchanged for (C26): `read` may only read. */
  scope: 'full' | 'read';
  /** False for a token of a test key (C25): its orders, balance, statement and webhooks are the test ones. */
  livemode: boolean;
};
