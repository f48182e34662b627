-- KEYS: articles, pending, owners set. ARGV: max due score, now, claim_lease, limit, owner,
-- held prefix, settle ('1': a process that knows nothing else works on these claims, a replay
-- starting). Each claim handed out again gets a new generation: an older copy of its request
-- still queued is dropped when popped (ledger_take.lua).
-- A claim of another worker with an output mark (ledger_output.lua) is in that worker's journal,
-- or a moment from it (a slow worker whose lease ran out between its journal line and its done
-- mark): handing it out again would put it in a second journal. Its lease is renewed instead;
-- the owner's done mark settles it, or, if the owner dies, the take-over of its claims
-- (ledger_recover_owners.lua) counts it as output. An earlier life of this worker (same worker
-- name) gets it back: its own journal reconciles it. With `settle`, no worker is writing it
-- out any more (it was killed): the claim comes back with the mark's writer (w) and counts (j),
-- as from a take-over, and the caller reads the writer's journal (crawler/ledger.py,
-- _settle_marked): done if its line is there, else requested again. Renewing it would leave it
-- pending for ever, in no journal: the restarted replay skips a claimed page as done.
local keys = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, ARGV[4])
local owner, held, settle = ARGV[5], ARGV[6], ARGV[7] == '1'
local out = {}
local function worker(name) return string.match(name, '^(.*)/[^/]*$') or name end
local function another(name) return name and owner ~= '' and worker(name) ~= worker(owner) end
for _, key in ipairs(keys) do
  local raw = redis.call('HGET', KEYS[1], key)
  local rec = raw and cjson.decode(raw) or nil
  if rec and rec.s == 'p' and rec.j and another(rec.o) and not settle then
    redis.call('ZADD', KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[3]), key)
  elseif rec and rec.s == 'p' then
    local claim = {k = key, v = rec.v, u = rec.u, a = rec.a, p = rec.p}
    -- The mark's writer: its owner when marked, or (taken over since) the worker that marked
    -- it. It stays, with its writer, until the version is done or marked again (as in a
    -- take-over: a taker killed before it settled the claim leaves it to the next one).
    if rec.j and settle and another(rec.m or rec.o) then
      rec.m = rec.m or rec.o
      claim.w, claim.j = rec.m, rec.j
    end
    redis.call('ZADD', KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[3]), key)
    if rec.o then redis.call('SREM', held .. rec.o, 'a|' .. key) end
    rec.g = (rec.g or 0) + 1
    if owner ~= '' then
      rec.o = owner
      redis.call('SADD', held .. owner, 'a|' .. key)
    end
    redis.call('HSET', KEYS[1], key, cjson.encode(rec))
    claim.g = rec.g
    table.insert(out, claim)
  else
    redis.call('ZREM', KEYS[2], key)
  end
end
if #out > 0 and owner ~= '' then redis.call('SADD', KEYS[3], owner) end
return cjson.encode(out)
