-- Removes a node's hold on an account's presence, but only the hold the release was
-- decided on: a newer hold (the account's device came back to the node meanwhile) has
-- another score and stays. Without this a release and a new hold sent on different
-- connections could land in the wrong order and leave the node out of the account's
-- presence, so its devices would miss live frames until the next renewal.
--
-- KEYS[1] presence zset      ARGV[1] node id      ARGV[2] the hold's score (expiry, ms)
-- Returns 1 if the hold was removed, 0 if it was not there or is a newer one.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) == tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
