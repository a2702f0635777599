-- Takes or extends the lease of one partition for one node.
--
-- Atomic: a free lease is taken with a fresh fencing token, so two nodes never both hold
-- it and each holder's token is larger than every earlier holder's.
--
-- The token is max(counter + 1, now in ms), not just the next count: the counter lives on
-- the partition's shard while the chat fences it must beat live on the accounts' shards,
-- so if that shard loses the counter (a lossy failover, a restart on old data) a plain
-- count would restart at 1 and every new owner would be refused until the chat fences
-- expired. On the clock it restarts above every token issued before the loss (tokens
-- track the clock unless partitions change hands more than once a millisecond). The clock
-- is Redis's own (TIME), so workers' clocks do not matter; a promoted replica's may lag
-- the old master's by less than the failover took.
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
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local fence = math.max(tonumber(redis.call('GET', counter) or '0') + 1, now_ms)
fence = string.format('%.0f', fence)
redis.call('SET', counter, fence)
redis.call('SET', lease, node .. '|' .. fence, 'PX', ttl)
return tonumber(fence)
