-- KEYS: feeds hash, due zset, feed owners hash. ARGV: url, state JSON, next poll, held prefix.
-- The poll is answered: its lease (and its owner's note of it) goes.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]), ARGV[1])
local owner = redis.call('HGET', KEYS[3], ARGV[1])
if owner then
  redis.call('HDEL', KEYS[3], ARGV[1])
  redis.call('SREM', ARGV[4] .. owner, 'f|' .. ARGV[1])
end
return 1
