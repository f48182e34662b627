-- KEYS: articles, pending. ARGV: key, version, now, max_attempts, retry_delay, held prefix.
-- A failed try leaves its worker: the retry is handed out by `recover` when due.
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return -1 end
local rec = cjson.decode(raw)
if rec.v ~= tonumber(ARGV[2]) or rec.s ~= 'p' then return -1 end
if rec.o then redis.call('SREM', ARGV[6] .. rec.o, 'a|' .. ARGV[1]) end
rec.o, rec.j, rec.m = nil, nil, nil  -- its output failed: nothing of it is in a journal
rec.a = (rec.a or 0) + 1
if rec.a >= tonumber(ARGV[4]) then
  rec.s, rec.p, rec.t = 'f', nil, nil
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[5]), ARGV[1])
return 1
