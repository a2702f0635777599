-- Gives a lease up, only if the caller still holds it with the same fencing token.
--
-- KEYS[1] lease
-- ARGV[1] expected value '<node>|<fence>'
--
-- Returns 1 if released, 0 if it was not held.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
