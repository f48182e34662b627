local articles, expiry, pending = KEYS[1], KEYS[2], KEYS[3]
local now, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local min_revision, max_versions = tonumber(ARGV[3]), tonumber(ARGV[4])
local lease, token = tonumber(ARGV[5]), ARGV[7]
local claimed = {}
for _, e in ipairs(cjson.decode(ARGV[6])) do
  local raw = redis.call('HGET', articles, e.k)
  local rec = raw and cjson.decode(raw) or nil
  local take, changed = false, false
  if not rec then
    rec = {v = 1, u = e.u, s = 'p', a = 0, p = e.p}
    take = true
  elseif token ~= '' and rec.s == 'p' and rec.t == token then
    table.insert(claimed, {e.k, rec.v})
  elseif e.u then
    if not rec.u then
      rec.u = e.u
      changed = true
    elseif e.u > rec.u + min_revision then
      if rec.s == 'p' then
        rec.u = e.u
        changed = true
      elseif rec.v < max_versions then
        rec = {v = rec.v + 1, u = e.u, s = 'p', a = 0, p = e.p}
        take = true
      end
    end
  end
  if take and token ~= '' then rec.t = token end
  if take or changed then redis.call('HSET', articles, e.k, cjson.encode(rec)) end
  if take then
    redis.call('ZADD', pending, now + lease, e.k)
    table.insert(claimed, {e.k, rec.v})
  end
  if rec then redis.call('ZADD', expiry, now + ttl, e.k) end
end
return cjson.encode(claimed)
