local added = 0
for i = 2, #KEYS do
    local base = 2 + (i - 2) * 6
    local version, fetched = ARGV[base + 1], ARGV[base + 4]
    local seen = redis.call('GET', KEYS[i])
    local add = true
    if seen then
        local bar = string.find(seen, '|', 1, true)
        local seen_fetched, seen_version = string.sub(seen, 1, bar - 1), string.sub(seen, bar + 1)
        if seen_version == version or fetched < seen_fetched then add = false end
    end
    if add then
        redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*',
            'canonical_url', ARGV[base + 2], 'domain', ARGV[base + 3], 'version', version,
            'fetched_at', fetched, 'content_hash', ARGV[base + 5], 'article', ARGV[base + 6])
        redis.call('SET', KEYS[i], fetched .. '|' .. version, 'EX', ARGV[2])
        added = added + 1
    else
        redis.call('EXPIRE', KEYS[i], ARGV[2])
    end
end
return added
