for i = 1, #ARGV, 2 do redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1]) end
return #ARGV / 2
