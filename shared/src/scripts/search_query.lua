-- Finds the newest messages of an account that contain every query word (and, when asked,
-- are in one chat), walking only the smallest posting list and never more than a fixed
-- number of its entries, so the cost does not grow with the account's history.
--
-- A query word is a term: the posting lists any one of which a hit must be in ('=' word:
-- that word's list; '^' word: the lists of the indexed words it is a prefix of, itself
-- first, at most ARGV[4] of them, from the lexicon). The chat filter is one more term.
-- The term with the fewest postings drives: its lists are merged newest first, a page at a
-- time, and each page is checked against the other terms (smallest first) with ZMSCORE.
--
-- Atomic (read only): one consistent view, so ranks used for paging cannot shift.
--
-- KEYS[1] docs hash (ref -> record JSON)   KEYS[2] lexicon zset
-- KEYS[3] chat zset (ref -> ts; read only when ARGV[5] is '1')
-- ARGV[1] posting key prefix (a word's posting zset is this followed by the word, in the
--         same hash-tag slot as KEYS)
-- ARGV[2] limit (hits)   ARGV[3] most candidates examined   ARGV[4] most words per prefix
-- ARGV[5] '1' = only messages of the chat of KEYS[3]         ARGV[6] largest page size
-- ARGV[7..] query words, each '=' or '^' followed by the case-folded word
--
-- Returns {capped, {record...}}: the records of the hits, newest first; capped is 1 when
-- the candidate limit ended the walk before `limit` hits were found (older hits may exist).
local docs, lexicon, chat = KEYS[1], KEYS[2], KEYS[3]
local prefix, limit = ARGV[1], tonumber(ARGV[2])
local max_candidates, max_expansions = tonumber(ARGV[3]), tonumber(ARGV[4])
local chat_only, max_page = ARGV[5] == '1', tonumber(ARGV[6])

-- Each term: its posting keys and their total size (an upper bound of its postings).
local terms = {}
local function add_term(keys)
  local size = 0
  for _, key in ipairs(keys) do
    size = size + redis.call('ZCARD', key)
  end
  terms[#terms + 1] = {keys = keys, size = size}
  return size
end

for i = 7, #ARGV do
  local kind, word = string.sub(ARGV[i], 1, 1), string.sub(ARGV[i], 2)
  local keys = {}
  if kind == '^' then
    local found = redis.call('ZRANGEBYLEX', lexicon, '[' .. word, '[' .. word .. '\255',
      'LIMIT', 0, max_expansions)
    for _, expansion in ipairs(found) do
      keys[#keys + 1] = prefix .. expansion
    end
  else
    keys[1] = prefix .. word
  end
  if add_term(keys) == 0 then
    return {0, {}}
  end
end
if chat_only and add_term({chat}) == 0 then
  return {0, {}}
end
if #terms == 0 or limit < 1 then
  return {0, {}}
end

table.sort(terms, function(a, b) return a.size < b.size end)
local driver = table.remove(terms, 1)

-- The driver's posting lists, read newest first by rank, a page at a time.
local page = math.min(math.max(limit, 16), max_page)
local cursors = {}
for _, key in ipairs(driver.keys) do
  cursors[#cursors + 1] = {key = key, rank = 0, buf = {}, pos = 1, done = false}
end

local function peek(cursor)
  if cursor.pos > #cursor.buf then
    if cursor.done then
      return nil
    end
    cursor.buf = redis.call('ZREVRANGE', cursor.key, cursor.rank, cursor.rank + page - 1,
      'WITHSCORES')
    cursor.rank, cursor.pos = cursor.rank + page, 1
    cursor.done = #cursor.buf < 2 * page
    if #cursor.buf == 0 then
      return nil
    end
  end
  return cursor.buf[cursor.pos], tonumber(cursor.buf[cursor.pos + 1])
end

local function next_ref()
  local best, best_ref, best_ts
  for _, cursor in ipairs(cursors) do
    local ref, ts = peek(cursor)
    if ref and (best == nil or ts > best_ts) then
      best, best_ref, best_ts = cursor, ref, ts
    end
  end
  if best then
    best.pos = best.pos + 2
  end
  return best_ref
end

-- Keeps the refs of `batch` found in any of `keys`, in order.
local function filter(batch, keys)
  local found = {}
  local missing = batch
  for _, key in ipairs(keys) do
    local scores = redis.call('ZMSCORE', key, unpack(missing))
    local still = {}
    for j = 1, #missing do
      if scores[j] then
        found[missing[j]] = true
      else
        still[#still + 1] = missing[j]
      end
    end
    missing = still
    if #missing == 0 then
      break
    end
  end
  local kept = {}
  for _, ref in ipairs(batch) do
    if found[ref] then
      kept[#kept + 1] = ref
    end
  end
  return kept
end

local seen, hits, examined, exhausted = {}, {}, 0, false
while #hits < limit and examined < max_candidates and not exhausted do
  local batch = {}
  while #batch < page and examined < max_candidates do
    local ref = next_ref()
    if ref == nil then
      exhausted = true
      break
    end
    if not seen[ref] then
      seen[ref] = true
      batch[#batch + 1] = ref
      examined = examined + 1
    end
  end
  for _, term in ipairs(terms) do
    if #batch == 0 then
      break
    end
    batch = filter(batch, term.keys)
  end
  for _, ref in ipairs(batch) do
    if #hits == limit then
      break
    end
    hits[#hits + 1] = ref
  end
  page = math.min(page * 2, max_page)
end

local capped = 0
if #hits < limit and not exhausted then
  capped = 1
end
if #hits == 0 then
  return {capped, {}}
end
local records = {}
for _, record in ipairs(redis.call('HMGET', docs, unpack(hits))) do
  if record then
    records[#records + 1] = record
  end
end
return {capped, records}
