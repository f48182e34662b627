-- KEYS: the queue, this worker's last-pop note, then (to take claims) the harvest articles hash,
-- owners set and feed owners hash. ARGV: pop token, note TTL, owner ('' = take nothing), held
-- prefix, most requests to drop in one call.
-- Pops the first request and notes "<token>|<request>" (a pop whose reply was lost is found
-- again). A request that carries its claim ("H[key, version, generation]\n..." or
-- "F[feed URL]\n...", see RedisPriorityQueue) is taken over in the same step: the claim or feed
-- lease is this owner's from now on, so a worker killed at any moment hands back exactly what it
-- held. An article request no longer to run (done, superseded, or an older copy of a claim
-- handed out again) is dropped and the next one popped. Returns {request or '', dropped}.
local owner, held = ARGV[3] or '', ARGV[4]

local function move(kind, id, previous)
  if previous then redis.call('SREM', held .. previous, kind .. '|' .. id) end
  redis.call('SADD', held .. owner, kind .. '|' .. id)
  redis.call('SADD', KEYS[4], owner)
end

local function take_article(key, version, generation)
  local raw = redis.call('HGET', KEYS[3], key)
  if not raw then return false end
  local rec = cjson.decode(raw)
  if rec.s ~= 'p' or rec.v ~= version then return false end
  if generation > 0 and (rec.g or 0) ~= generation then return false end
  if rec.o ~= owner then
    move('a', key, rec.o)
    rec.o = owner
    redis.call('HSET', KEYS[3], key, cjson.encode(rec))
  end
  return true
end

local function take_feed(url)
  local previous = redis.call('HGET', KEYS[5], url)
  if previous and previous ~= owner then
    redis.call('HSET', KEYS[5], url, owner)
    move('f', url, previous)
  end
  return true  -- a poll is never dropped: a second one is harmless
end

local function runs(member)
  if owner == '' then return true end
  local kind = string.sub(member, 1, 1)
  if kind ~= 'H' and kind ~= 'F' then return true end
  local header = cjson.decode(string.sub(member, 2, string.find(member, '\n', 1, true) - 1))
  if kind == 'F' then return take_feed(header[1]) end
  return take_article(header[1], tonumber(header[2]), tonumber(header[3]))
end

local dropped = 0
while dropped <= tonumber(ARGV[5] or '0') do
  local first = redis.call('ZRANGE', KEYS[1], 0, 0)
  if #first == 0 then break end
  redis.call('ZREM', KEYS[1], first[1])
  if runs(first[1]) then
    redis.call('SET', KEYS[2], ARGV[1] .. '|' .. first[1], 'EX', ARGV[2])
    return {first[1], dropped}
  end
  dropped = dropped + 1
end
return {'', dropped}
