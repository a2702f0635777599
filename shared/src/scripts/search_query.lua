-- Finds the newest messages of an account that contain every query word (and, when asked,
-- are in one chat), walking only the smallest posting list, within a fixed budget of work,
-- so the cost does not grow with the account's history.
--
-- A query word is a term: the posting lists any one of which a hit must be in ('=' word:
-- that word's list; '^' word: the lists of the indexed words it is a prefix of, itself
-- first, at most ARGV[4] of them, from the lexicon). The chat filter is one more term.
-- The term with the fewest postings drives: its lists are read newest first, a page at a
-- time, and each page is checked against the other terms (smallest first) with ZMSCORE.
-- The work is capped: about ARGV[3] posting entries read or refs looked up in all (one
-- page more at most).
--
-- Atomic (read only): one consistent view, so ranks used for paging cannot shift.
--
-- KEYS[1] docs hash (ref -> record JSON)   KEYS[2] lexicon zset
-- KEYS[3] chat zset (ref -> ts; read only when ARGV[5] is '1')
-- ARGV[1] posting key prefix (a word's posting zset is this followed by the word, in the
--         same hash-tag slot as KEYS)
-- ARGV[2] limit (hits)   ARGV[3] work budget (entries read + lookups)
-- ARGV[4] most words per prefix
-- ARGV[5] '1' = only messages of the chat of KEYS[3]         ARGV[6] largest page size
-- ARGV[7..] query words, each '=' or '^' followed by the case-folded word
--
-- Returns {capped, {record...}}: the records of the hits, newest first; capped is 1 when
-- the work budget ended the walk before `limit` hits were found (older hits may exist).
local docs, lexicon, chat = KEYS[1], KEYS[2], KEYS[3]
local prefix, limit = ARGV[1], tonumber(ARGV[2])
local max_work, max_expansions = tonumber(ARGV[3]), tonumber(ARGV[4])
local chat_only, max_page = ARGV[5] == '1', tonumber(ARGV[6])

-- Each term: its posting keys, largest first (a ref is most likely in those), and their
-- total size (an upper bound of the term's postings).
local terms = {}
local function add_term(keys)
  local sizes, size = {}, 0
  for _, key in ipairs(keys) do
    sizes[key] = redis.call('ZCARD', key)
    size = size + sizes[key]
  end
  table.sort(keys, function(a, b) return sizes[a] > sizes[b] end)
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

-- Work left: posting entries read from the driver plus refs looked up in other terms.
local budget = max_work
local lookups_per_ref = 1
for _, term in ipairs(terms) do
  lookups_per_ref = lookups_per_ref + #term.keys
end

-- The driver, read newest first a page at a time. Several lists are merged by the time
-- that starts each ref (13 digits), each read in pages that start small and double.
-- Scores are never read: formatting them is the dominant cost of a read in Redis 7.0.
local page = math.min(math.max(limit, 16), max_page)
local exhausted = false
local rank = 0
local cursors, seen = {}, {}

-- Moves a cursor of the driver to its next ref, reading its next page when needed;
-- `cursor.ref` is nil once it has none, `cursor.ts` the time that starts the ref.
local function advance(cursor)
  cursor.pos = cursor.pos + 1
  if cursor.pos > #cursor.buf then
    if cursor.done then
      cursor.ref = nil
      return
    end
    cursor.buf = redis.call('ZREVRANGE', cursor.key, cursor.rank,
      cursor.rank + cursor.size - 1)
    budget = budget - #cursor.buf
    cursor.rank, cursor.pos = cursor.rank + cursor.size, 1
    cursor.done = #cursor.buf < cursor.size
    cursor.size = math.min(cursor.size * 2, max_page)
  end
  cursor.ref = cursor.buf[cursor.pos]
  if cursor.ref then
    cursor.ts = tonumber(string.sub(cursor.ref, 1, 13))
  end
end

if #driver.keys > 1 then
  for _, key in ipairs(driver.keys) do
    local cursor = {key = key, rank = 0, buf = {}, pos = 0, done = false,
      size = math.max(4, math.ceil(page / #driver.keys))}
    advance(cursor)
    cursors[#cursors + 1] = cursor
  end
end

-- The newest ref of the merged lists, or nil.
local function next_merged()
  local best
  for _, cursor in ipairs(cursors) do
    if cursor.ref and (best == nil or cursor.ts > best.ts) then
      best = cursor
    end
  end
  if best == nil then
    return nil
  end
  local ref = best.ref
  advance(best)
  return ref
end

-- Up to n refs of the driver not taken before, newest first.
local function take(n)
  if #driver.keys == 1 then
    local refs = redis.call('ZREVRANGE', driver.keys[1], rank, rank + n - 1)
    rank = rank + n
    budget = budget - #refs
    exhausted = #refs < n
    return refs
  end
  local refs = {}
  while #refs < n and budget > 0 do
    local ref = next_merged()
    if ref == nil then
      exhausted = true
      break
    end
    if not seen[ref] then
      seen[ref] = true
      refs[#refs + 1] = ref
    end
  end
  return refs
end

-- Keeps the refs of `batch` found in any of `keys`, in order.
local function filter(batch, keys)
  local found = {}
  local missing = batch
  for _, key in ipairs(keys) do
    local scores = redis.call('ZMSCORE', key, unpack(missing))
    budget = budget - #missing
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

local hits, capped, taken = {}, 0, 0
while #hits < limit and not exhausted do
  local want = math.min(page, math.floor(budget / lookups_per_ref))
  if want < 1 then
    capped = 1
    break
  end
  local batch = take(want)
  taken = taken + #batch
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
  -- Next page: what the hit rate so far says the missing hits need (a quarter more), or
  -- twice this one while nothing matched.
  if #hits > 0 then
    page = math.ceil((limit - #hits) * taken / #hits * 1.25)
  else
    page = page * 2
  end
  page = math.max(16, math.min(page, max_page))
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
