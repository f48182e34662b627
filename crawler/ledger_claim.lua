local articles, expiry, pending, owners = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now, ttl = tonumber(ARGV[1]), tonumber(ARGV[2])
local min_revision, max_versions = tonumber(ARGV[3]), tonumber(ARGV[4])
local lease, token = tonumber(ARGV[5]), ARGV[7]
local owner, held = ARGV[8], ARGV[9]
local claimed = {}
for _, e in ipairs(cjson.decode(ARGV[6])) do
  local raw = redis.call('HGET', articles, e.k)
  local rec = raw and cjson.decode(raw) or nil
  local take, changed = false, false
  if not rec then
    rec = {v = 1, u = e.u, s = 'p', a = 0, p = e.p, g = 1}
    take = true
  elseif token ~= '' and rec.s == 'p' and rec.t == token then
    table.insert(claimed, {e.k, rec.v, rec.g or 0})
  elseif e.u then
    if not rec.u then
      rec.u = e.u
      changed = true
    elseif e.u > rec.u + min_revision then
      if rec.s == 'p' then
        rec.u = e.u
        changed = true
      elseif rec.v < max_versions then
        rec = {v = rec.v + 1, u = e.u, s = 'p', a = 0, p = e.p, g = (rec.g or 0) + 1}
        take = true
      end
    end
  end
  if take and e.f then
    -- A harvest filter ruled it out: done at once, never pending, never handed out.
    rec.s, rec.p, rec.a = 'd', nil, nil
    redis.call('HSET', articles, e.k, cjson.encode(rec))
    table.insert(claimed, {e.k, rec.v, rec.g, 1})
    take = false
  end
  if take and token ~= '' then rec.t = token end
  if take and owner ~= '' then
    rec.o = owner
    redis.call('SADD', held, 'a|' .. e.k)
  end
  if take or changed then redis.call('HSET', articles, e.k, cjson.encode(rec)) end
  if take then
    redis.call('ZADD', pending, now + lease, e.k)
    table.insert(claimed, {e.k, rec.v, rec.g})
  end
  if rec then redis.call('ZADD', expiry, now + ttl, e.k) end
end
if #claimed > 0 and owner ~= '' then redis.call('SADD', owners, owner) end
return cjson.encode(claimed)
