local keys = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, key in ipairs(keys) do
  redis.call('HDEL', KEYS[1], key)
  redis.call('ZREM', KEYS[2], key)
  redis.call('ZREM', KEYS[3], key)
end
return #keys
