-- Reads what an account's outbox can serve: its head seq, its oldest retained seq and the
-- ranges its rebases recorded as lost, creating the head (at the given base) if the
-- account has no outbox yet, so that every cursor handed to a device is one this outbox
-- can later judge.
--
-- Atomic: head creation and the reads see the same outbox.
--
-- KEYS[1] outbox stream   KEYS[2] outbox meta hash
-- ARGV[1] seq base for a new outbox   ARGV[2] outbox retention TTL (s)
--
-- Returns {head, oldest, lost, lost_floor}: oldest is the seq of the first retained
-- entry, or -1 if the outbox holds no entries; lost and lost_floor are the meta's fields
-- (nil when it has none; see outbox_append.lua).
local outbox, meta = KEYS[1], KEYS[2]
local seq_base, retention = ARGV[1], ARGV[2]

if redis.call('HSETNX', meta, 'seq', seq_base) == 1 then
  redis.call('EXPIRE', meta, retention)
end
local fields = redis.call('HMGET', meta, 'seq', 'lost', 'lost_floor')
local first = redis.call('XRANGE', outbox, '-', '+', 'COUNT', 1)
local oldest = -1
if #first > 0 then
  oldest = tonumber(string.match(first[1][1], '^(%d+)-'))
end
return {tonumber(fields[1]), oldest, fields[2], fields[3]}
