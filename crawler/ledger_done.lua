-- Done marks of several article versions at once (the articles a sink batch releases together).
-- KEYS: articles, expiry, pending, then the hashes the marks count their articles in.
-- ARGV: seen_ttl, held prefix, then per mark: key, version, now, n, and n pairs (index of a
-- hash in KEYS, field): each field gets +1 in the same step as its mark, so a count is neither
-- lost nor made twice by a crash.
-- Returns one result per mark: 1 marked, 0 not the pending version, -1 unreadable record.
local ttl, held_prefix = tonumber(ARGV[1]), ARGV[2]
local results = {}
local i = 3
while i <= #ARGV do
  local key, version, now, n = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
  local counts_at = i + 4
  i = counts_at + 2 * n
  local result = 0
  local raw = redis.call('HGET', KEYS[1], key)
  if raw then
    local ok, rec = pcall(cjson.decode, raw)
    if not ok or type(rec) ~= 'table' then
      result = -1
    elseif rec.v == version and rec.s == 'p' then
      if rec.o then redis.call('SREM', held_prefix .. rec.o, 'a|' .. key) end
      rec.s, rec.p, rec.a, rec.t, rec.o, rec.j, rec.m = 'd', nil, nil, nil, nil, nil, nil
      redis.call('HSET', KEYS[1], key, cjson.encode(rec))
      redis.call('ZREM', KEYS[3], key)
      redis.call('ZADD', KEYS[2], now + ttl, key)
      for j = counts_at, counts_at + 2 * n - 1, 2 do
        redis.call('HINCRBY', KEYS[tonumber(ARGV[j])], ARGV[j + 1], 1)
      end
      result = 1
    end
  end
  results[#results + 1] = result
end
return results
