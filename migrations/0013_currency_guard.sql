-- C24: an order is priced in its account's currency as the placement statement's snapshot read it. When the account
-- moved to another currency while the statement waited (an operator's change at a zero balance, then a deposit), the
-- debit's row is the new one: this guard gives the statement up as a serialization failure, which placement runs
-- again from a fresh snapshot, priced in the new currency. Never a debit in one currency from a balance in another.
CREATE FUNCTION order_currency_guard(amount numeric, account_currency text, priced_currency text) RETURNS numeric
LANGUAGE plpgsql AS $$
BEGIN
  IF account_currency IS DISTINCT FROM priced_currency THEN
    RAISE EXCEPTION 'order_priced_in_another_currency' USING ERRCODE = '40001';
  END IF;
  RETURN amount;
END
$$;
