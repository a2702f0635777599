-- Moves a chat's read marker forward to a message, never back.
--
-- Atomic: the lookup of the message's position and the comparison with the marker.
--
-- KEYS[1] message index   KEYS[2] read markers
-- ARGV[1] chat id   ARGV[2] message id
--
-- Returns 1 if the marker moved, 0 if it already was at or after the message, -1 if the
-- message is not a stored message of that chat.
local messages, reads = KEYS[1], KEYS[2]
local chat_id, message_id = ARGV[1], ARGV[2]

local located = redis.call('HGET', messages, message_id)
if not located then
  return -1
end
local chat, entry = string.match(located, '^(.*)|([^|]+)$')
if chat ~= chat_id then
  return -1
end

local function position(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end

local current = redis.call('HGET', reads, chat_id)
if current then
  local current_entry = string.match(current, '^([^|]+)|')
  local cur_ms, cur_seq = position(current_entry)
  local new_ms, new_seq = position(entry)
  if new_ms < cur_ms or (new_ms == cur_ms and new_seq <= cur_seq) then
    return 0
  end
end
redis.call('HSET', reads, chat_id, entry .. '|' .. message_id)
return 1
