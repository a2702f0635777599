-- Extends a lease only if the caller still holds it with the same fencing token.
--
-- KEYS[1] lease
-- ARGV[1] expected value '<node>|<fence>'   ARGV[2] lease TTL (ms)
--
-- Returns 1 if renewed, 0 if the lease is lost.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
