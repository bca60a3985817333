/**
 * Who a request acts for, as every layer names it (the HTTP context, the token check, the domain's use cases): an
 * account as the one placing a request, with its id and the currency it pays in.
 */
export type Caller = { id: number; currency: string; currencySymbol: string };
