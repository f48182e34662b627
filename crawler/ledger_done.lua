-- KEYS: articles, expiry, pending, then hashes to count the article in (see ARGV).
-- ARGV: key, version, now, seen_ttl, held prefix, then one field per extra KEY: each gets +1,
-- in the same step as the done mark, so a count is neither lost nor made twice by a crash.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
if rec.v ~= tonumber(ARGV[2]) or rec.s ~= 'p' then return 0 end
if rec.o then redis.call('SREM', ARGV[5] .. rec.o, 'a|' .. ARGV[1]) end
rec.s, rec.p, rec.a, rec.t, rec.o = 'd', nil, nil, nil, nil
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[1])
for i = 4, #KEYS do
  redis.call('HINCRBY', KEYS[i], ARGV[i + 2], 1)
end
return 1
