-- KEYS: due zset, feed owners hash. ARGV: now, held prefix.
-- Polls under way were cut off (a local start: nothing else can be polling them): every leased
-- feed is due now, its lease and its owner's note of it gone. Returns how many.
local leased = redis.call('HGETALL', KEYS[2])
for i = 1, #leased, 2 do
  local url, owner = leased[i], leased[i + 1]
  redis.call('ZADD', KEYS[1], tonumber(ARGV[1]), url)
  redis.call('SREM', ARGV[2] .. owner, 'f|' .. url)
end
redis.call('DEL', KEYS[2])
return #leased / 2
