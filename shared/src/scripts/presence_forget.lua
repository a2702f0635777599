-- Forgets the holds of gateway nodes that stopped announcing themselves (killed, or cut
-- off from Redis for longer than their liveness lasts). Only holds written before the
-- cutoff go: a node that restarted under the same id since writes newer holds, which stay.
-- Members without a device part (an earlier layout: a plain node id) go as well.
--
-- KEYS[1] presence zset      ARGV[1] cutoff (hold id, ms)      ARGV[2..] dead node ids
-- Returns how many holds were removed.
local dead = {}
for i = 2, #ARGV do
  dead[ARGV[i]] = true
end
local cutoff = tonumber(ARGV[1])
local members = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local removed = 0
for i = 1, #members, 2 do
  local member, score = members[i], tonumber(members[i + 1])
  local node = string.match(member, '^([^\n]*)')
  if dead[node] and (score < cutoff or not string.find(member, '\n', 1, true)) then
    removed = removed + redis.call('ZREM', KEYS[1], member)
  end
end
return removed
