-- Reads what an account's outbox can serve: its head seq and its oldest retained seq,
-- creating the head (at the given base) if the account has no outbox yet, so that every
-- cursor handed to a device is one this outbox can later judge.
--
-- Atomic: head creation and the two reads see the same outbox.
--
-- KEYS[1] outbox stream   KEYS[2] outbox meta hash
-- ARGV[1] seq base for a new outbox   ARGV[2] outbox retention TTL (s)
--
-- Returns {head, oldest}: oldest is the seq of the first retained entry, or -1 if the
-- outbox holds no entries.
local outbox, meta = KEYS[1], KEYS[2]
local seq_base, retention = ARGV[1], ARGV[2]

if redis.call('HSETNX', meta, 'seq', seq_base) == 1 then
  redis.call('EXPIRE', meta, retention)
end
local head = tonumber(redis.call('HGET', meta, 'seq'))
local first = redis.call('XRANGE', outbox, '-', '+', 'COUNT', 1)
local oldest = -1
if #first > 0 then
  oldest = tonumber(string.match(first[1][1], '^(%d+)-'))
end
return {head, oldest}
