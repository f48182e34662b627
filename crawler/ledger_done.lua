local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
if rec.v ~= tonumber(ARGV[2]) or rec.s ~= 'p' then return 0 end
rec.s, rec.p, rec.a, rec.t = 'd', nil, nil, nil
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[1])
return 1
