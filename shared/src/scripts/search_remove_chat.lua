-- Removes up to a batch of one chat's messages from an account's search index: their
-- postings, records and ids, and words left with no message from the lexicon. The caller
-- repeats it until nothing remains, so a large chat never blocks Redis for long.
--
-- Atomic per batch: each removed message disappears from every structure at once.
--
-- KEYS[1] chat zset (ref -> ts)   KEYS[2] docs hash   KEYS[3] lexicon zset
-- KEYS[4] terms hash, KEYS[5] chat ids hash: where messages indexed before their words and
--         ids moved into the docs hash keep them (search_add.lua)
-- ARGV[1] posting key prefix (a word's posting zset is this followed by the word, in the
--         same hash-tag slot as KEYS)
-- ARGV[2] batch size (messages)   ARGV[3] chat id
--
-- Returns {removed, remaining}: messages removed now and messages of the chat still indexed.
local chat, docs, lexicon, terms, ids = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local prefix, batch, chat_id = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local refs = redis.call('ZRANGE', chat, 0, batch - 1)
for _, ref in ipairs(refs) do
  local entry = redis.call('HGET', docs, 't' .. ref) or redis.call('HGET', terms, ref)
  if entry then
    local newline = string.find(entry, '\n', 1, true)
    for word in string.gmatch(string.sub(entry, 1, newline - 1), '[^ ]+') do
      local postings = prefix .. word
      redis.call('ZREM', postings, ref)
      if redis.call('EXISTS', postings) == 0 then
        redis.call('ZREM', lexicon, word)
      end
    end
    local message_id = string.sub(entry, newline + 1)
    redis.call('HDEL', docs, 'i' .. chat_id .. '\n' .. message_id)
    redis.call('HDEL', ids, message_id)
  end
  redis.call('HDEL', docs, ref, 't' .. ref)
  redis.call('HDEL', terms, ref)
  redis.call('ZREM', chat, ref)
end
return {#refs, redis.call('ZCARD', chat)}
