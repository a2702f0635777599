-- Merges a device's push target into the account's push hash.
--
-- Atomic: the read of the stored target and the write of the merged one, so two updates
-- of different fields (say FCM token and ntfy topic from two gateways) both survive.
--
-- KEYS[1] push targets hash
-- ARGV[1] device id
-- ARGV[2] '1' to change the FCM token   ARGV[3] new FCM token ('' clears it)
-- ARGV[4] '1' to change the ntfy topic  ARGV[5] new ntfy topic ('' clears it)
--
-- A target left with no field is removed. Returns 1 if the device keeps a target, else 0.
local targets, device = KEYS[1], ARGV[1]

local target = {}
local stored = redis.call('HGET', targets, device)
if stored then
  local ok, decoded = pcall(cjson.decode, stored)
  if ok and type(decoded) == 'table' then
    -- Keep only string fields: anything else (a JSON null) counts as absent.
    for _, field in ipairs({'fcm_token', 'ntfy_topic'}) do
      if type(decoded[field]) == 'string' then
        target[field] = decoded[field]
      end
    end
  end
end

local function apply(field, change, value)
  if change == '1' then
    if value == '' then
      target[field] = nil
    else
      target[field] = value
    end
  end
end
apply('fcm_token', ARGV[2], ARGV[3])
apply('ntfy_topic', ARGV[4], ARGV[5])

if next(target) == nil then
  redis.call('HDEL', targets, device)
  return 0
end
redis.call('HSET', targets, device, cjson.encode(target))
return 1
