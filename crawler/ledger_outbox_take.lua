-- The counts of done marks on a Redis Cluster, on their way to the monitoring hashes (another
-- hash slot than the ledger's): see RedisHarvestState._send_counts.
-- KEYS: outbox (hash "<hash key>\n<field>" -> count, filled by ledger_done.lua), sending (the
-- batch being applied), sequence. Starts a batch (a new id, in field "") unless one is under
-- way (a worker died applying it: it is applied again, each hash at most once, by its id).
-- Returns the batch as HGETALL pairs, or an empty list when there is nothing to send.
if redis.call('EXISTS', KEYS[2]) == 0 then
  if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
  redis.call('RENAME', KEYS[1], KEYS[2])
  redis.call('HSET', KEYS[2], '', redis.call('INCR', KEYS[3]))
end
return redis.call('HGETALL', KEYS[2])
