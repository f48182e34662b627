local docnum, sketch, doc_id, ttl = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local min_matches, add = tonumber(ARGV[5]), ARGV[6] == '1'
local max_docs, record_prefix, order_key = tonumber(ARGV[7]), ARGV[8], ARGV[9] or ''
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

-- A record is the sketch, the document id, then "\0" and its order key if it has one (none:
-- indexed without a key, or before keys existed, so it sorts first).
local function parse(record)
  local rest = string.sub(record, n + 1)
  local zero = string.find(rest, '\0', 1, true)
  if zero then return string.sub(rest, 1, zero - 1), string.sub(rest, zero + 1) end
  return rest, ''
end

-- Byte order (Lua's `<` on strings follows the server's locale; Python compares code points,
-- which is byte order in UTF-8): both backends must rank keys alike.
local function less(a, b)
  local la, lb = #a, #b
  for i = 1, math.min(la, lb) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return la < lb
end

-- True when a document keyed `key` came before this one (a caller without a key: arrival
-- order, so everything indexed came before it).
local function before(key)
  return order_key == '' or not less(order_key, key)
end

-- 1. This very document, or an exact copy: a record under this content hash, same sketch.
local matches = {}
local record = redis.call('GET', KEYS[1])
if record and string.sub(record, 1, n) == sketch then
  local owner, key = parse(record)
  if owner == doc_id then return {'known', owner, 2 * n, key} end
  matches[1] = {owner, key, 2 * n, docnum, 'exact'}
end

-- 2. Near copies: documents sharing a band, confirmed on their stored sketches.
local members = redis.call('MGET', unpack(KEYS, 2))
local seen = {}
for _, list in ipairs(members) do
  if list then
    for num in string.gmatch(list, '%d+') do
      if not seen[num] and num ~= docnum then
        seen[num] = true
        local other = redis.call('GET', record_prefix .. num)
        if other and #other > n then
          local owner, key = parse(other)
          if owner ~= doc_id then
            local m = agreeing(other)
            if m >= min_matches then matches[#matches + 1] = {owner, key, m, num, 'near'} end
          end
        end
      end
    end
  end
end

-- 3. A copy of the earliest match that came before this one (among equal keys the most
-- similar, then the smallest id: the same choice whatever order the buckets list them in).
local function sooner(a, b)
  if a[2] ~= b[2] then return less(a[2], b[2]) end
  if a[3] ~= b[3] then return a[3] > b[3] end
  return less(a[1], b[1])
end
local first = false
for _, match in ipairs(matches) do
  if before(match[2]) and (not first or sooner(match, first)) then first = match end
end
if first then return {first[5], first[1], first[3], first[2]} end

-- 4. The first copy: every match came after it, so they are its copies now (their records go,
-- the caller flags them, and takes their record copies out of the other shards by docnum);
-- remember it (unless its content hash is taken by another text).
local reply, gone = {'new', false, 0, ''}, {}
for _, match in ipairs(matches) do
  reply[#reply + 1] = match[1]
  reply[#reply + 1] = match[4]
  gone[match[4]] = true
end
if add and (not record or #matches > 0 and matches[1][5] == 'exact') then
  for num in pairs(gone) do
    if num ~= docnum then redis.call('DEL', record_prefix .. num) end
  end
  local value = sketch .. doc_id
  if order_key ~= '' then value = value .. '\0' .. order_key end
  redis.call('SET', KEYS[1], value, 'EX', ttl)
  for i = 2, #KEYS do
    local list = members[i - 1]
    if list then
      local kept = {}
      for num in string.gmatch(list, '%d+') do
        if num ~= docnum and not gone[num] then kept[#kept + 1] = num end
      end
      while #kept >= max_docs do table.remove(kept, 1) end
      kept[#kept + 1] = docnum
      redis.call('SET', KEYS[i], table.concat(kept, ','), 'EX', ttl)
    else
      redis.call('SET', KEYS[i], docnum, 'EX', ttl)
    end
  end
end
return reply
