-- The statement (C24) shows each entry in the currency it moved. The column is added empty, which takes no time
-- whatever the ledger's size and lets a process of the previous version (a rolling restart) go on writing entries
-- without it: an entry with none moved in its account's currency, which no account could change until this release,
-- and the statement reads it so.
ALTER TABLE "balance_ledger" ADD COLUMN "currency" varchar(3);
