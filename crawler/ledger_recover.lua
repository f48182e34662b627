local keys = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, ARGV[4])
local out = {}
for _, key in ipairs(keys) do
  local raw = redis.call('HGET', KEYS[1], key)
  local rec = raw and cjson.decode(raw) or nil
  if rec and rec.s == 'p' then
    redis.call('ZADD', KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[3]), key)
    table.insert(out, {k = key, v = rec.v, u = rec.u, a = rec.a, p = rec.p})
  else
    redis.call('ZREM', KEYS[2], key)
  end
end
return cjson.encode(out)
