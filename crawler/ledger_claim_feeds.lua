-- KEYS: due zset, feed owners hash, owners set. ARGV: now, feed_lease, limit, owner, held key.
local urls = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local owner = ARGV[4]
for _, url in ipairs(urls) do
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), url)
  if owner ~= '' then
    redis.call('HSET', KEYS[2], url, owner)
    redis.call('SADD', ARGV[5], 'f|' .. url)
  end
end
if #urls > 0 and owner ~= '' then redis.call('SADD', KEYS[3], owner) end
return urls
