-- Many operations on one shard of the index per call (a batch of articles in flight), each
-- run as if it were a call of its own, in order.
-- KEYS[1], KEYS[2]  the shard's record and bucket key prefixes (keys of its hash slot)
-- ARGV[1..4]        ttl, min_matches, max_bucket_docs, sketch bytes
-- ARGV[5..]         one operation each:
--   'c' add(0/1) sketch docnum NUL doc_id NUL order_key [NUL bucket id]...  check (and add)
--   'd' docnum NUL doc_id                                  drop the record if it names doc_id
local record_prefix, bucket_prefix = KEYS[1], KEYS[2]
local ttl, min_matches, max_docs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local bxor, byte, sub, find = bit.bxor, string.byte, string.sub, string.find

-- The fields of `s` from position `from`, split at NUL (ids and keys never hold one).
local function fields(s, from)
  local out = {}
  while true do
    local zero = find(s, '\0', from, true)
    if not zero then
      out[#out + 1] = sub(s, from)
      return out
    end
    out[#out + 1] = sub(s, from, zero - 1)
    from = zero + 1
  end
end

-- A record is the sketch, the document id, then "\0" and its order key if it has one (none:
-- indexed without a key, or before keys existed, so it sorts first).
local function parse(record)
  local zero = find(record, '\0', n + 1, true)
  if zero then return sub(record, n + 1, zero - 1), sub(record, zero + 1) end
  return sub(record, n + 1), ''
end

-- Byte order (Lua's `<` on strings follows the server's locale; Python compares code points,
-- which is byte order in UTF-8): both backends must rank keys alike.
local function less(a, b)
  local la, lb = #a, #b
  for i = 1, math.min(la, lb) do
    local x, y = byte(a, i), byte(b, i)
    if x ~= y then return x < y end
  end
  return la < lb
end

local function check(op)
  local add = sub(op, 2, 2) == '1'
  local sketch = sub(op, 3, n + 2)
  local f = fields(op, n + 3)
  local docnum, doc_id, order_key = f[1], f[2], f[3]
  local mine = nil

  -- 4-bit sketch positions that agree: a byte holds two; x < 16 means the high halves agree,
  -- x % 16 == 0 the low halves.
  local function agreeing(other)
    if not mine then mine = {byte(sketch, 1, n)} end
    local m = 0
    for i = 1, n do
      local x = bxor(mine[i], byte(other, i))
      if x == 0 then m = m + 2 elseif x < 16 or x % 16 == 0 then m = m + 1 end
    end
    return m
  end

  -- True when the document `owner`, keyed `key`, came before this one. Keys decide, and equal
  -- keys the ids, so that of two documents exactly one came first (a total order: two racers
  -- checking in several shards at once can never both find the other first). A caller
  -- without a key: arrival order, so everything indexed came before it.
  local function before(key, owner)
    if order_key == '' or less(key, order_key) then return true end
    return key == order_key and less(owner, doc_id)
  end

  -- 1. This very document, or an exact copy: a record under this content hash, same sketch.
  local record_key = record_prefix .. docnum
  local matches = {}
  local record = redis.call('GET', record_key)
  if record and sub(record, 1, n) == sketch then
    local owner, key = parse(record)
    if owner == doc_id then return {'known', owner, 2 * n, key, 0} end
    matches[1] = {owner, key, 2 * n, docnum, 'exact'}
  end

  -- 2. Near copies: documents sharing a band, confirmed on their stored sketches (a member
  -- whose record is gone is skipped: it keeps its place in the bucket, as in the embedded
  -- index, until newer members push it out).
  local bucket_keys = {}
  for i = 4, #f do bucket_keys[#bucket_keys + 1] = bucket_prefix .. f[i] end
  local members = {}
  if #bucket_keys > 0 then members = redis.call('MGET', unpack(bucket_keys)) end
  local seen, gone = {}, {}
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
    if before(match[2], match[1]) and (not first or sooner(match, first)) then first = match end
  end
  if first then return {first[5], first[1], first[3], first[2], 0} end

  -- 4. The first copy: every match came after it, so they are its copies now (their records go,
  -- the caller flags them, and takes their record copies out of the other shards by docnum);
  -- remember it (unless its content hash is taken by another text). The reply's 5th element
  -- says whether it was added (the caller withdraws it if another shard knows an earlier copy).
  local reply = {'new', false, 0, '', 0}
  for _, match in ipairs(matches) do
    reply[#reply + 1] = match[1]
    reply[#reply + 1] = match[4]
    gone[match[4]] = true
  end
  if add and (not record or #matches > 0 and matches[1][5] == 'exact') then
    reply[5] = 1
    for _, match in ipairs(matches) do
      if match[4] ~= docnum then redis.call('DEL', record_prefix .. match[4]) end
    end
    local value = sketch .. doc_id
    if order_key ~= '' then value = value .. '\0' .. order_key end
    redis.call('SET', record_key, value, 'EX', ttl)
    for i, bucket_key in ipairs(bucket_keys) do
      local list = members[i]
      if list then
        local kept = {}
        for num in string.gmatch(list, '%d+') do
          if num ~= docnum and not gone[num] then kept[#kept + 1] = num end
        end
        while #kept >= max_docs do table.remove(kept, 1) end
        kept[#kept + 1] = docnum
        redis.call('SET', bucket_key, table.concat(kept, ','), 'EX', ttl)
      else
        redis.call('SET', bucket_key, docnum, 'EX', ttl)
      end
    end
  end
  return reply
end

-- A record that still names `doc_id` leaves the shard (a superseded copy's, or this worker's
-- own copy of a document another shard found to be a duplicate); one that another document
-- has taken since stays.
local function drop(op)
  local f = fields(op, 2)
  local key = record_prefix .. f[1]
  local record = redis.call('GET', key)
  if record and #record > n and parse(record) == f[2] then return redis.call('DEL', key) end
  return 0
end

local replies = {}
for i = 5, #ARGV do
  local op = ARGV[i]
  local run = sub(op, 1, 1) == 'c' and check or drop
  local ok, reply = pcall(run, op)
  if ok then
    replies[#replies + 1] = reply
  else  -- this operation's own error; the others' replies stand
    replies[#replies + 1] = {err = type(reply) == 'table' and reply.err or tostring(reply)}
  end
end
return replies
