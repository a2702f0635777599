-- Adds one message to an account's search index, once: its record, its chat's list, and
-- one posting per distinct word (the words come tokenized and case-folded by the caller).
--
-- Atomic: the id check, ref issue and every write, so a message is either fully indexed
-- or not at all, and indexing the same message id of a chat again changes nothing.
--
-- KEYS[1] chat ids hash (message id -> ref)   KEYS[2] ref counter
-- KEYS[3] docs hash (ref -> record JSON)       KEYS[4] terms hash (ref -> words, message id)
-- KEYS[5] chat zset (ref -> ts)                KEYS[6] lexicon zset
-- KEYS[7..] one posting zset per word, in the order of ARGV[4..]
-- ARGV[1] message id   ARGV[2] ts (ms, zero-padded to 13 digits)   ARGV[3] record JSON
-- ARGV[4..] the words
--
-- The message's search ref is `<ARGV[2]>:<n>` (n from the counter), so refs order by time
-- as strings: a query merges posting lists without reading their scores.
--
-- Returns 1 if the message was indexed now, 0 if it already was.
local ids, counter, docs, terms, chat, lexicon =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local message_id, ts, record = ARGV[1], ARGV[2], ARGV[3]

if redis.call('HEXISTS', ids, message_id) == 1 then
  return 0
end

local ref = ts .. ':' .. redis.call('INCR', counter)
-- The words go into the lexicon a thousand per command (unpack takes at most ~8,000
-- values), so a message of a few words costs one ZADD there.
local words, lexicon_entries = {}, {}
local function add_to_lexicon()
  if #lexicon_entries > 0 then
    redis.call('ZADD', lexicon, unpack(lexicon_entries))
    lexicon_entries = {}
  end
end
for i = 4, #ARGV do
  local word = ARGV[i]
  words[#words + 1] = word
  lexicon_entries[#lexicon_entries + 1] = 0
  lexicon_entries[#lexicon_entries + 1] = word
  if #lexicon_entries >= 2000 then
    add_to_lexicon()
  end
  redis.call('ZADD', KEYS[i + 3], ts, ref)
end
add_to_lexicon()

redis.call('HSET', ids, message_id, ref)
redis.call('HSET', docs, ref, record)
redis.call('HSET', terms, ref, table.concat(words, ' ') .. '\n' .. message_id)
redis.call('ZADD', chat, ts, ref)
return 1
