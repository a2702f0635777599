-- Raises a chat's fence to the caller's fencing token, so that any older owner still
-- running is refused on its next write.
--
-- KEYS[1] chat fence
-- ARGV[1] fencing token   ARGV[2] retention TTL (s)
--
-- Returns 1 if the caller now owns the chat, 0 if a newer owner already wrote for it.
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local fence = tonumber(ARGV[1])
if fence < current then
  return 0
end
redis.call('SET', KEYS[1], fence, 'EX', ARGV[2])
return 1
