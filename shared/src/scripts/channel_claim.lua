-- Gives the channel (or thread) created by one inbound request its number, once: a
-- request handled again after a takeover gets the number it got the first time.
--
-- Atomic: the check of an earlier claim and the counter increment.
--
-- KEYS[1] channel counter   KEYS[2] effects hash of the creating request
-- ARGV[1] effects TTL (s)
--
-- Returns the channel's number.
local counter, effects = KEYS[1], KEYS[2]
local claimed = redis.call('HGET', effects, 'channel')
if claimed then
  return tonumber(claimed)
end
local number = redis.call('INCR', counter)
redis.call('HSET', effects, 'channel', number)
redis.call('EXPIRE', effects, ARGV[1])
return number
