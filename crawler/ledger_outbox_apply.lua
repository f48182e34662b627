-- One hash's share of a batch of counts (ledger_outbox_take.lua), applied once whoever sends it.
-- KEYS: the counted hash, its applied-batch marker (same hash slot). ARGV: batch id, marker TTL
-- (s), then field, count pairs. Batches are made one at a time with growing ids, so a batch
-- whose id is not above the marker's was applied already. Returns 1 applied, 0 already.
local id = tonumber(ARGV[1])
if (tonumber(redis.call('GET', KEYS[2])) or 0) >= id then return 0 end
for i = 3, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('SET', KEYS[2], id, 'EX', ARGV[2])
return 1
