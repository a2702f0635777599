-- search_add: adds one message to an account's search index: its record, its chat's list,
-- and one posting per distinct word (the words come tokenized and case-folded by the
-- caller). Defined here once, for the scripts that index: search_index.lua (a message on
-- its own) and outbox_append.lua (a finished message with its append).
--
-- keys: the caller's KEYS; from keys[k]: ref counter, docs hash, chat zset (ref -> ts),
--       lexicon zset, then one posting zset per word
-- args: the caller's ARGV; from args[a]: ts (ms, zero-padded to 13 digits), record JSON,
--       then the words
-- chat_id, message_id: the message's chat and its id there
-- ref_number: what follows '<ts>:' in the message's ref: 's<seq>' for a message written
--       with an outbox seq (unique in the account), nil to take the next of the counter
-- once: whether to skip a message whose id the chat's ids already hold (a caller that
--       de-duplicates by other means passes false and saves the read)
--
-- The docs hash holds, per message, three fields written with one HSET: ref -> record
-- JSON, 't' .. ref -> its words and id (for removal), 'i' .. chat .. '\n' .. message id ->
-- ref (the id check). (Messages indexed before these moved into it have their words in
-- the terms hash and their id in the chat's ids hash.)
--
-- The message's search ref is `<ts>:<n>`, so refs order by time as strings: a query merges
-- posting lists without reading their scores. The words go into the lexicon a thousand per
-- command (unpack takes at most ~8,000 values), so a message of a few words costs one ZADD
-- there.
--
-- Returns 1 if the message was indexed now, 0 if it already was.
local function search_add(keys, k, args, a, chat_id, message_id, ref_number, once)
  local counter, docs, chat, lexicon = keys[k], keys[k + 1], keys[k + 2], keys[k + 3]
  local ts, record = args[a], args[a + 1]
  local id_field = 'i' .. chat_id .. '\n' .. message_id
  if once and redis.call('HEXISTS', docs, id_field) == 1 then
    return 0
  end
  local ref = ts .. ':' .. (ref_number or redis.call('INCR', counter))
  local words, lexicon_entries = {}, {}
  local function add_to_lexicon()
    if #lexicon_entries > 0 then
      redis.call('ZADD', lexicon, unpack(lexicon_entries))
      lexicon_entries = {}
    end
  end
  for i = a + 2, #args do
    local word = args[i]
    words[#words + 1] = word
    lexicon_entries[#lexicon_entries + 1] = 0
    lexicon_entries[#lexicon_entries + 1] = word
    if #lexicon_entries >= 2000 then
      add_to_lexicon()
    end
    redis.call('ZADD', keys[k + 4 + (i - a - 2)], ts, ref)
  end
  add_to_lexicon()
  redis.call('HSET', docs, ref, record, 't' .. ref, table.concat(words, ' ') .. '\n' ..
    message_id, id_field, ref)
  redis.call('ZADD', chat, ts, ref)
  return 1
end

