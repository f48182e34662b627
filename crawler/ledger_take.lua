-- KEYS: articles, owners set. ARGV: key, version, generation, owner, held prefix.
-- A worker popped an article request from the shared queue: it owns the claim from now on, if
-- the request is still the one to run (1); 0: done, superseded, or an older copy of a claim
-- that was handed out again (drop it).
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
if rec.s ~= 'p' or rec.v ~= tonumber(ARGV[2]) then return 0 end
local generation = tonumber(ARGV[3])
if generation > 0 and (rec.g or 0) ~= generation then return 0 end
local owner, held = ARGV[4], ARGV[5]
if rec.o ~= owner then
  if rec.o then redis.call('SREM', held .. rec.o, 'a|' .. ARGV[1]) end
  rec.o = owner
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
  redis.call('SADD', held .. owner, 'a|' .. ARGV[1])
  redis.call('SADD', KEYS[2], owner)
end
return 1
