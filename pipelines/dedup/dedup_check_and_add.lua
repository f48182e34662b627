local docnum, sketch, doc_id, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local min_matches, add = tonumber(ARGV[5]), ARGV[6] == '1'
local max_docs, record_prefix = tonumber(ARGV[7]), ARGV[8]
local n = #sketch
local mine = {string.byte(sketch, 1, n)}
local bxor = bit.bxor

-- 4-bit sketch positions that agree: a byte holds two; x < 16 means the high halves agree,
-- x % 16 == 0 the low halves.
local function agreeing(other)
  local m = 0
  for i = 1, n do
    local x = bxor(mine[i], string.byte(other, i))
    if x == 0 then m = m + 2 elseif x < 16 or x % 16 == 0 then m = m + 1 end
  end
  return m
end

-- 1. Exact duplicate: a record under this very content hash, with this very sketch.
local record = redis.call('GET', KEYS[1])
if record and string.sub(record, 1, n) == sketch then
  local owner = string.sub(record, n + 1)
  if owner == doc_id then return {'known', owner, 2 * n} end
  return {'exact', owner, 2 * n}
end

-- 2. Near duplicates: documents sharing a band, confirmed on their stored sketches.
local best, best_matches = false, min_matches - 1
local members = redis.call('MGET', unpack(KEYS, 2))
local seen = {}
for _, list in ipairs(members) do
  if list then
    for num in string.gmatch(list, '%d+') do
      if not seen[num] and num ~= docnum then
        seen[num] = true
        local other = redis.call('GET', record_prefix .. num)
        if other and #other > n then
          local owner = string.sub(other, n + 1)
          if owner ~= doc_id then
            local m = agreeing(other)
            if m > best_matches then best, best_matches = owner, m end
          end
        end
      end
    end
  end
end
if best then return {'near', best, best_matches} end

-- 3. A first copy: remember it (unless its content hash is taken by another text).
if add and not record then
  redis.call('SET', KEYS[1], sketch .. doc_id, 'EX', ttl)
  for i = 2, #KEYS do
    local list = members[i - 1]
    if list then
      local kept = {}
      for num in string.gmatch(list, '%d+') do
        if num ~= docnum then kept[#kept + 1] = num end
      end
      while #kept >= max_docs do table.remove(kept, 1) end
      kept[#kept + 1] = docnum
      redis.call('SET', KEYS[i], table.concat(kept, ','), 'EX', ttl)
    else
      redis.call('SET', KEYS[i], docnum, 'EX', ttl)
    end
  end
end
return {'new', false, 0}
