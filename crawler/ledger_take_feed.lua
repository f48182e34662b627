-- KEYS: feed owners hash, owners set. ARGV: feed URL, owner, held prefix.
-- A worker popped a feed request from the shared queue: the poll's lease is its from now on,
-- so that the poll is handed out again at once if this worker dies before answering it.
local previous = redis.call('HGET', KEYS[1], ARGV[1])
if not previous or previous == ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SREM', ARGV[3] .. previous, 'f|' .. ARGV[1])
redis.call('SADD', ARGV[3] .. ARGV[2], 'f|' .. ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
return 1
