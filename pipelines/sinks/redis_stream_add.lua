-- KEYS: stream, one seen key per record, then the seen keys of the superseded articles.
-- ARGV: maxlen, seen ttl, number of superseded keys, then 6 values per record.
local superseded = tonumber(ARGV[3])
local records = #KEYS - 1 - superseded
local added = 0
for i = 2, records + 1 do
    local base = 3 + (i - 2) * 6
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
-- A superseded article (a copy of one found to be earlier) is never added again: its seen
-- key says "fetched" at '~', after any date, so every later fetch of it counts as older.
for i = records + 2, #KEYS do
    redis.call('SET', KEYS[i], '~|superseded', 'EX', ARGV[2])
end
return added
