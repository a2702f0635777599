-- Removes one device's hold on a gateway node from an account's presence, but only a hold
-- the node wrote up to the release's decision: a newer hold (the device came back to the
-- node meanwhile, its write sent on another connection) has a higher id and stays. Without
-- this a release and a new hold could land in the wrong order and leave the device out of
-- presence, so its node would miss the account's live frames.
--
-- KEYS[1] presence zset      ARGV[1] member ('<node>\n<device>')      ARGV[2] hold id
-- Returns 1 if the hold was removed, 0 if it was not there or is a newer one.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  return redis.call('ZREM', KEYS[1], ARGV[1])
end
return 0
