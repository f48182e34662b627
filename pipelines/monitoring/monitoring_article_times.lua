-- KEYS: a domain's totals hash. ARGV: the batch's first article time, its last ("" when it has
-- none), its polls since its last article, then the three field names (first, last, polls).
-- The rule of apply_to_totals (backends.py): the earliest first article; the latest last
-- article, with the polls since it; a batch with no article adds its polls.
local first, last, polls = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local FIRST, LAST, POLLS = ARGV[4], ARGV[5], ARGV[6]
if first then
  local known = tonumber(redis.call('HGET', KEYS[1], FIRST))
  if not known or first < known then redis.call('HSET', KEYS[1], FIRST, ARGV[1]) end
end
if last then
  local known = tonumber(redis.call('HGET', KEYS[1], LAST))
  if not known or last >= known then redis.call('HSET', KEYS[1], LAST, ARGV[2], POLLS, polls) end
elseif polls > 0 then
  redis.call('HINCRBY', KEYS[1], POLLS, polls)
end
return 1
