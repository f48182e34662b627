local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if #first == 0 then return false end
redis.call('ZREM', KEYS[1], first[1])
redis.call('SET', KEYS[2], ARGV[1] .. '|' .. first[1], 'EX', ARGV[2])
return first[1]
