-- 0015 (SQLite): at most one attempt in flight per webhook (api/domain/sender.py). A sender's
-- claim takes one due delivery of a webhook whose busy_until is NULL or past, and sets it to the
-- end of the claim's lease; recording the outcome sets it back to the claim's moment (past: the
-- webhook is free, and claims take the least recently served webhook first, so a slow receiver
-- that just had its turn waits behind the others). A sender that died leaves it set until the
-- lease ends (seconds: the deadline of one attempt and a margin).
ALTER TABLE webhooks ADD COLUMN busy_until TIMESTAMP;
