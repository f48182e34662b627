local cutoff = tonumber(ARGV[1])
local dead = {}
local removed = 0
for _, name in ipairs(redis.call('HKEYS', KEYS[1])) do
  local bucket = tonumber(string.match(name, '^(%d+):'))
  if bucket and bucket < cutoff then
    dead[#dead + 1] = name
    if #dead == 500 then
      removed = removed + redis.call('HDEL', KEYS[1], unpack(dead))
      dead = {}
    end
  end
end
if #dead > 0 then removed = removed + redis.call('HDEL', KEYS[1], unpack(dead)) end
return removed
