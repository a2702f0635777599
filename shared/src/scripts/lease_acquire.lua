-- Takes or extends the lease of one partition for one node.
--
-- Atomic: a free lease is taken with a fresh fencing token, so two nodes never both hold
-- it and each holder's token is larger than every earlier holder's.
--
-- KEYS[1] lease   KEYS[2] fencing-token counter
-- ARGV[1] node id   ARGV[2] lease TTL (ms)
--
-- Returns the holder's fencing token, or 0 if another node holds the lease.
local lease, counter = KEYS[1], KEYS[2]
local node, ttl = ARGV[1], ARGV[2]

local holder = redis.call('GET', lease)
if holder then
  local holder_node, holder_fence = string.match(holder, '^(.*)|(%d+)$')
  if holder_node == node then
    redis.call('PEXPIRE', lease, ttl)
    return tonumber(holder_fence)
  end
  return 0
end
local fence = redis.call('INCR', counter)
redis.call('SET', lease, node .. '|' .. fence, 'PX', ttl)
return fence
