-- Raises a chat's fence to the caller's fencing token, so that any older owner still
-- running is refused on its next write.
--
-- KEYS[1] outbox meta hash (the fence is one of its fields)
-- KEYS[2] the chat's fence as kept before it moved into the meta (read once per chat)
-- ARGV[1] fencing token   ARGV[2] retention TTL (s)   ARGV[3] the meta field of the fence
--
-- Returns 1 if the caller now owns the chat, 0 if a newer owner already wrote for it.
local meta, field = KEYS[1], ARGV[3]
local current = tonumber(redis.call('HGET', meta, field) or redis.call('GET', KEYS[2]) or '0')
local fence = tonumber(ARGV[1])
if fence < current then
  return 0
end
redis.call('HSET', meta, field, fence)
redis.call('EXPIRE', meta, ARGV[2], 'NX')
return 1
