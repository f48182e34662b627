-- KEYS: sending. ARGV: batch id. The batch was applied everywhere: gone, unless another batch
-- took its place meanwhile (a slower sender of the same batch finishing after it).
if redis.call('HGET', KEYS[1], '') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
