-- KEYS: articles, pending, owners set, feeds due zset, feed owners hash.
-- ARGV: alive prefix, held prefix, now, claim_lease, owner (this process), its worker name,
-- limit.
-- Takes over what workers without a heartbeat held, and what an earlier life of this
-- worker held (same worker name, another life: it cannot be working on it any more). Claims
-- come back with a new generation and this process as owner; feed polls become due now.
-- A claim another worker had marked as being output (ledger_output.lua) comes back with that
-- worker's name (w: the mark's writer) and the done mark's counts (j): the caller reads that worker's journal and
-- marks it done if its line is there, else requests it again (crawler/ledger.py,
-- _settle_marked). Its own earlier life's come back plain: a restarted worker's journal
-- reconciles them.
local articles, pending, owners, due, feed_owners = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local alive, held = ARGV[1], ARGV[2]
local now, lease, me, my_worker = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6]
local budget = tonumber(ARGV[7])
local out, feeds, gone = {}, 0, {}
for _, w in ipairs(redis.call('SMEMBERS', owners)) do
  if budget <= 0 then break end
  local worker = string.match(w, '^(.*)/[^/]*$') or w
  if w ~= me and (worker == my_worker or redis.call('EXISTS', alive .. w) == 0) then
    local members = redis.call('SPOP', held .. w, budget)
    budget = budget - #members
    for _, m in ipairs(members) do
      local kind, id = string.sub(m, 1, 1), string.sub(m, 3)
      if kind == 'a' then
        local raw = redis.call('HGET', articles, id)
        local rec = raw and cjson.decode(raw) or nil
        if rec and rec.s == 'p' and rec.o == w then
          local claim = {k = id, v = rec.v, u = rec.u, a = rec.a, p = rec.p}
          if rec.j then
            -- The mark stays, with its writer (m), until the version is done or marked again:
            -- a taker killed before it settled the claim leaves it to the next one.
            rec.m = rec.m or w
            local writer = string.match(rec.m, '^(.*)/[^/]*$') or rec.m
            if writer ~= my_worker then claim.w, claim.j = rec.m, rec.j end
          end
          rec.o, rec.g = me, (rec.g or 0) + 1
          claim.g = rec.g
          redis.call('HSET', articles, id, cjson.encode(rec))
          redis.call('ZADD', pending, now + lease, id)
          redis.call('SADD', held .. me, m)
          table.insert(out, claim)
        end
      elseif redis.call('HGET', feed_owners, id) == w then
        redis.call('HDEL', feed_owners, id)
        redis.call('ZADD', due, now, id)
        feeds = feeds + 1
      end
    end
    if redis.call('SCARD', held .. w) == 0 then
      redis.call('SREM', owners, w)
      table.insert(gone, w)
    end
  end
end
if #out > 0 then redis.call('SADD', owners, me) end
return cjson.encode({claims = out, feeds = feeds, gone = gone,
                     more = budget <= 0})
