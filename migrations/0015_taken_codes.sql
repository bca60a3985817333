-- card_codes_taken_idx (the newest code each card service has given out, where fulfilment starts its walk for free
-- codes) is built after the migrations, without holding back the writes of a large card_codes (src/db/migrate.ts).
SELECT 1;
