-- C24's price guard: the placement statement passes an order's total through this function, which aborts the whole
-- statement (the Idempotency-Key claim and campaign reservations with it) when the total is above the buyer's
-- max_price. The detail carries the total and the account's currency for the 409's message.
CREATE FUNCTION order_price_guard(total numeric, max_price numeric, currency text) RETURNS numeric
LANGUAGE plpgsql AS $$
BEGIN
  IF max_price IS NOT NULL AND total > max_price THEN
    RAISE EXCEPTION 'order_above_max_price' USING ERRCODE = 'P0001', DETAIL = to_char(total, 'FM999999999999990.00') || ' ' || currency;
  END IF;
  RETURN total;
END
$$;
