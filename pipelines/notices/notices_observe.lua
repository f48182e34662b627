local sigs_key, meta_key = KEYS[1], KEYS[2]
local now, tau, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl, copy_overlap, notice_count = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local rebase = tonumber(ARGV[7])
local function num(x) return string.format('%.17g', x) end
local function digests(blob)
  local out = {}
  for i = 1, #blob, DIGEST do out[#out + 1] = string.sub(blob, i, i + DIGEST - 1) end
  return out
end
local ids, sigs = digests(ARGV[8]), digests(ARGV[9])
local evidence = {}
for token in string.gmatch(ARGV[10], '%d+') do evidence[#evidence + 1] = tonumber(token) end

local meta = redis.call('HMGET', meta_key, 't0', 'articles')
local t0 = tonumber(meta[1]) or now
local articles = tonumber(meta[2]) or 0
local x = (now - t0) / tau
if x > rebase then
  local factor = math.exp(-x)
  local all = redis.call('ZRANGE', sigs_key, 0, -1, 'WITHSCORES')
  local args = {}
  for i = 1, #all, 2 do
    args[#args + 1] = num(tonumber(all[i + 1]) * factor)
    args[#args + 1] = all[i]
    if #args >= 2 * CHUNK then redis.call('ZADD', sigs_key, unpack(args)); args = {} end
  end
  if #args > 0 then redis.call('ZADD', sigs_key, unpack(args)) end
  articles = articles * factor
  t0, x = now, 0
end
local weight = math.exp(x)

local known = false
for i = 1, #ids do
  if redis.call('ZSCORE', sigs_key, ids[i]) then known = true end
end
local counts = {}
for i = 1, #sigs do
  local score = redis.call('ZSCORE', sigs_key, sigs[i])
  counts[i] = score and tonumber(score) / weight or 0
end
local total, shared, k = 0, 0, 1
while k <= #evidence do
  local words, n = evidence[k], evidence[k + 1]
  local seen = false
  for j = k + 2, k + 1 + n do
    local count = counts[evidence[j] + 1]
    if count > 0 and count < notice_count then seen = true end
  end
  k = k + 2 + n
  total = total + words
  if seen then shared = shared + words end
end
local status = 'counted'
if known then status = 'known' elseif total > 0 and shared >= copy_overlap * total then
  status = 'copy'
end

local w = num(weight)
for i = 1, #ids do redis.call('ZINCRBY', sigs_key, w, ids[i]) end
if status == 'counted' then
  for i = 1, #sigs do
    redis.call('ZINCRBY', sigs_key, w, sigs[i])
    counts[i] = counts[i] + 1
  end
  articles = articles + weight
end
redis.call('HSET', meta_key, 't0', num(t0), 'articles', num(articles))
local size = redis.call('ZCARD', sigs_key)
if size > cap then redis.call('ZREMRANGEBYRANK', sigs_key, 0, size - cap - 1) end
redis.call('EXPIRE', sigs_key, ttl)
redis.call('EXPIRE', meta_key, ttl)

for i = 1, #counts do counts[i] = num(counts[i]) end
return {status, num(articles / weight), table.concat(counts, ' ')}
