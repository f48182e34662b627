-- KEYS: articles, pending, owners set, feeds due zset, feed owners hash, expiry zset.
-- ARGV: alive prefix, held prefix, now, claim_lease, owner (this process), its worker name,
-- limit, seen TTL, the outbox hash of counts ('' : count in the hashes themselves).
-- Takes over what workers without a heartbeat held, and what an earlier life of this
-- worker held (same worker name, another life: it cannot be working on it any more). Claims
-- come back with a new generation and this process as owner; feed polls become due now.
-- A claim whose output mark is set (ledger_output.lua) by another worker is in that worker's
-- journal, or was a moment from it: it is marked done here, with its counts, not handed out
-- again (its own earlier life's are handed out: a restarted worker's journal reconciles them).
local articles, pending, owners, due, feed_owners = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local expiry, seen_ttl, outbox = KEYS[6], tonumber(ARGV[8]), ARGV[9]
local alive, held = ARGV[1], ARGV[2]
local now, lease, me, my_worker = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5], ARGV[6]
local budget = tonumber(ARGV[7])
local out, feeds, gone, output = {}, 0, {}, 0
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
        if rec and rec.s == 'p' and rec.o == w and rec.j and worker ~= my_worker then
          for _, count in ipairs(rec.j) do
            if outbox ~= '' then
              redis.call('HINCRBY', outbox, count[1] .. '\n' .. count[2], 1)
            else
              redis.call('HINCRBY', count[1], count[2], 1)
            end
          end
          rec.s, rec.p, rec.a, rec.t, rec.o, rec.j = 'd', nil, nil, nil, nil, nil
          redis.call('HSET', articles, id, cjson.encode(rec))
          redis.call('ZREM', pending, id)
          redis.call('ZADD', expiry, now + seen_ttl, id)
          output = output + 1
        elseif rec and rec.s == 'p' and rec.o == w then
          rec.o, rec.g = me, (rec.g or 0) + 1
          redis.call('HSET', articles, id, cjson.encode(rec))
          redis.call('ZADD', pending, now + lease, id)
          redis.call('SADD', held .. me, m)
          table.insert(out, {k = id, v = rec.v, u = rec.u, a = rec.a, p = rec.p, g = rec.g})
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
return cjson.encode({claims = out, feeds = feeds, gone = gone, output = output,
                     more = budget <= 0})
