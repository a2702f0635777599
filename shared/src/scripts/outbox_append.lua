-- Appends one frame for an account: to its outbox (never-dropped frames) and, for
-- finished messages, to the chat history, exactly once per effect, and only for the
-- current owner of the chat.
--
-- Atomic: fence check, de-duplication, seq assignment, outbox and history appends.
--
-- KEYS[1] outbox stream      KEYS[2] outbox meta hash   KEYS[3] turn effects hash
-- KEYS[4] the chat's fence as kept before it moved into the meta (read once per chat)
-- KEYS[5] history stream
-- KEYS[6] message index (message id -> '<chat>|<history entry id>')
-- KEYS[7..] the search index's keys and the words' posting keys (search_add.lua, sent in
--         front of this script), when the history entry is indexed
-- ARGV[1] fencing token ('' = unfenced: a frame its request alone determines, written
--         by whichever node gets to it first and de-duplicated by its effect id)
-- ARGV[2] effect id ('' = not de-duplicated)
-- ARGV[3] frame JSON         ARGV[4] origin device      ARGV[5] request id ('' = none)
-- ARGV[6] target device ('' = every device)             ARGV[7] outbox max length
-- ARGV[8] now (ms)           ARGV[9] history entry JSON ('' = none)
-- ARGV[10] seq base for a new outbox                    ARGV[11] turn effects TTL (s)
-- ARGV[12] outbox retention TTL (s)                     ARGV[13] '1' = outboxed, '0' = live only
-- ARGV[14] message id of the history entry              ARGV[15] chat id
-- ARGV[16] W3C traceparent of the writer's span ('' = not traced)
-- ARGV[17] least jump of a rebase                   ARGV[18] lost ranges kept
-- ARGV[19] how often (s) the expiries of the outbox, its meta and a history are renewed
-- ARGV[20] the meta field stamping the chat history's renewal
-- ARGV[21] the live-channel message without its seq
-- ARGV[22] the account's live channel
-- ARGV[23] the meta field holding the chat's fence (the highest fencing token that wrote)
-- ARGV[24] the search ref's ts ('' = the history entry is not indexed), ARGV[25] its search
--         record, ARGV[26..] its words (search_add.lua)
--
-- The frame is published live (written now, or written before by an earlier attempt:
-- devices drop seqs they have) on the account's live channel, which every gateway node
-- holding a device of the account subscribes to, as '<seq>\n' .. ARGV[21] ('' for a
-- live-only frame), in the same step as the append, so a device never waits for a second
-- round trip.
--
-- Expiries are renewed when due, not on every append: each renewal sets retention +
-- ARGV[19] and stamps the meta (field exp, and ARGV[20] for a chat's history) with the
-- writer's clock, so a key outlives its last write by at least the retention. A stream
-- that does not exist yet (a new outbox, a deleted chat's history) is created with its
-- expiry. The turn effects hash gets its expiry once, when its first effect is recorded
-- (field _ttl marks it).
--
-- One seq names one frame, forever. The meta records which Redis history handed out its
-- seqs (field run). When another one appends (a promoted replica that may lack the tail
-- the old master had handed out, a restarted server that lost its last writes, a slot
-- moved to another node), the outbox is rebased first: the head jumps to
-- max(seq + jump, seq_base), above every seq the old history could have handed out, and
-- (seq, point] is recorded as lost (field lost, at most ARGV[18] ranges; older ones fold
-- into lost_floor). A device whose last seq is inside is reset; the others step over the
-- jump, which holds no frame. A rebase where nothing was lost costs only the jump.
--
-- Returns {status, seq}: status 1 = written, 2 = already written by an earlier attempt (seq
-- is that attempt's), 0 = fenced off (a newer owner wrote for this chat; seq 0).
local outbox, meta, effects, fence_key, history = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local fence, effect_id, frame, origin, request_id, target =
  tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local max_len, now, history_entry, seq_base = ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local effects_ttl, retention, outboxed = ARGV[11], ARGV[12], ARGV[13] == '1'
local messages, message_id, chat_id = KEYS[6], ARGV[14], ARGV[15]
local traceparent, jump, ranges_kept = ARGV[16], tonumber(ARGV[17]), tonumber(ARGV[18])
local renew_every = tonumber(ARGV[19])
local kept_for = tonumber(retention) + renew_every
local now_ms = tonumber(now)
local history_stamp = ARGV[20]
local live_message, live_channel, fence_field = ARGV[21], ARGV[22], ARGV[23]

-- Whether an expiry stamped at `stamp` (ms, nil = never) is due for renewal.
local function due(stamp)
  return not stamp or math.abs(now_ms - tonumber(stamp)) >= renew_every * 1000
end

-- XADD to `stream` without creating it; creates it with its expiry if it did not exist.
-- Returns the entry id and whether the stream was created.
local function append_entry(stream, id, fields)
  local entry_id = redis.call('XADD', stream, 'NOMKSTREAM', 'MAXLEN', '~', max_len, id,
    unpack(fields))
  if entry_id then
    return entry_id, false
  end
  entry_id = redis.call('XADD', stream, 'MAXLEN', '~', max_len, id, unpack(fields))
  redis.call('EXPIRE', stream, kept_for)
  return entry_id, true
end

-- The Redis history this script runs in, to tell whether another one handed out the seqs:
-- the master's replication id (INFO replication, about 3.5 us in a script). It changes when
-- a replica is promoted and when a master restarts, whatever it reloaded, and a master that
-- was demoted and promoted again gets a new one, so a failback cannot reuse seqs either.
-- (A cluster node id, 0.5 us, stays the same across restarts and failbacks; INFO server's
-- run_id, 7-9 us, stays the same when one process is demoted and promoted again.)
local function history_here()
  return 'repl:' .. string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
end

-- Moves the head from `before` past every seq another history could have handed out and
-- records (before, point] as lost. Ranges below the oldest frame kept are dropped: their
-- cursors reset anyway, as older than the outbox.
local function rebase(before, here)
  local point = math.max(before + jump, tonumber(seq_base))
  local fields = redis.call('HMGET', meta, 'lost', 'lost_floor')
  local floor = tonumber(fields[2] or '0')
  local first = redis.call('XRANGE', outbox, '-', '+', 'COUNT', 1)
  local oldest = point + 1
  if #first > 0 then
    oldest = tonumber(string.match(first[1][1], '^(%d+)-'))
  end
  local kept = {}
  for b, p in string.gmatch(fields[1] or '', '(%d+)-(%d+)') do
    if tonumber(p) + 1 >= oldest then
      kept[#kept + 1] = {tonumber(b), tonumber(p)}
    end
  end
  kept[#kept + 1] = {before, point}
  while #kept > ranges_kept do
    floor = math.max(floor, kept[1][2])
    table.remove(kept, 1)
  end
  if floor + 1 < oldest then
    floor = 0
  end
  local lost = {}
  for i, range in ipairs(kept) do
    lost[i] = string.format('%.0f-%.0f', range[1], range[2])
  end
  redis.call('HSET', meta, 'seq', string.format('%.0f', point), 'run', here,
    'lost', table.concat(lost, ' '), 'lost_floor', string.format('%.0f', floor))
end

-- The meta's fields this append needs, in one read: the chat's fence (fenced frames), run
-- (outboxed frames) and the expiry stamps of the outbox and of the chat's history.
local fields = {}
if fence or outboxed or history_entry ~= '' then
  fields = redis.call('HMGET', meta, 'run', 'exp', history_stamp, fence_field)
end

if fence then
  local recorded = fields[4] or redis.call('GET', fence_key)
  local current_fence = tonumber(recorded or '0')
  if fence < current_fence then
    return {0, 0}
  end
  if fence > current_fence or not fields[4] then
    redis.call('HSET', meta, fence_field, fence)
    redis.call('EXPIRE', meta, kept_for, 'NX')
  end
end

local reply = {1, 0}

-- Publishes the frame, at `seq` (0 = live only), on the account's live channel.
local function publish_live(seq)
  local at = seq > 0 and string.format('%.0f', seq) or ''
  redis.call('PUBLISH', live_channel, at .. '\n' .. live_message)
end

local effects_marked = true
if effect_id ~= '' then
  local seen = redis.call('HMGET', effects, effect_id, '_ttl')
  if seen[1] then
    reply[1], reply[2] = 2, tonumber(seen[1])
    publish_live(reply[2])
    return reply
  end
  effects_marked = seen[2] ~= false
end

local stamps = {}

if outboxed then
  local recorded = fields[1] or ''
  local here = history_here()
  if recorded == '' then
    -- A new outbox, or one written before histories were recorded: nothing to compare.
    redis.call('HSETNX', meta, 'seq', seq_base)
    redis.call('HSET', meta, 'run', here)
  elseif recorded ~= here then
    rebase(tonumber(redis.call('HGET', meta, 'seq') or seq_base), here)
  end
  local seq = redis.call('HINCRBY', meta, 'seq', 1)
  local entry = {'f', frame, 'o', origin, 'r', request_id, 't', target}
  if traceparent ~= '' then
    entry[#entry + 1], entry[#entry + 2] = 'tp', traceparent
  end
  local _, created = append_entry(outbox, string.format('%.0f-0', seq), entry)
  if created or due(fields[2]) then
    if not created then
      redis.call('EXPIRE', outbox, kept_for)
    end
    stamps[#stamps + 1], stamps[#stamps + 2] = 'exp', now
  end
  reply[2] = seq
end

if history_entry ~= '' then
  local entry_id, created = append_entry(history, '*', {'m', history_entry})
  if created or due(fields[3]) then
    if not created then
      redis.call('EXPIRE', history, kept_for)
    end
    stamps[#stamps + 1], stamps[#stamps + 2] = history_stamp, now
  end
  if message_id ~= '' then
    redis.call('HSET', messages, message_id, chat_id .. '|' .. entry_id)
    if ARGV[24] ~= '' then
      -- Indexed in the same step, so exactly when the history gets it: an effect's message
      -- needs no id check, and a seq makes its ref without the counter.
      local ref_number = reply[2] > 0 and string.format('s%.0f', reply[2]) or nil
      search_add(KEYS, 7, ARGV, 24, chat_id, message_id, ref_number, effect_id == '')
    end
  end
end

if #stamps > 0 then
  redis.call('HSET', meta, unpack(stamps))
  redis.call('EXPIRE', meta, kept_for)
end

if effect_id ~= '' then
  if effects_marked then
    redis.call('HSET', effects, effect_id, reply[2])
  else
    redis.call('HSET', effects, effect_id, reply[2], '_ttl', '1')
    redis.call('EXPIRE', effects, effects_ttl)
  end
end
publish_live(reply[2])
return reply
