-- A request's response (or error) arrived: its slot is free for any worker (crawler/politeness.py).
-- KEYS[1] slots (sorted set of leases), KEYS[2] state (hash); ARGV: token, the delay AutoThrottle
-- set for the domain after this response (µs, "" when AutoThrottle is off), state TTL (ms).
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[2], 'delay', ARGV[2])
  -- Only ever lengthen the TTL: the acquire script may have set a longer one (a long delay).
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
  end
end
return 1
