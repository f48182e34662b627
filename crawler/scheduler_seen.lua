local now = tonumber(ARGV[2])
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if expires and tonumber(expires) > now then return 1 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return 0
