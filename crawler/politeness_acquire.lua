-- One request to a domain asks to start now, whichever worker sends it (crawler/politeness.py).
-- KEYS[1] slots: sorted set, lease token -> lease end (µs); KEYS[2] state: hash with `next` (the
-- earliest start of the domain's next request, µs) and `delay` (the delay AutoThrottle last
-- published for the domain, µs).
-- ARGV: token, concurrency, floor delay (µs: DOWNLOAD_DELAY or robots.txt crawl-delay, plus the
-- margin that keeps it at the server), lease (µs), poll (µs: when to ask again if every slot is
-- taken), state TTL (ms).
-- Returns {answer, µs to wait before asking again, shared delay µs}; answer 1: go (slot leased),
-- 0: too soon after the last start, -1: every slot taken.
-- Time is Redis's own clock (TIME), so workers on machines whose clocks disagree still agree.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local concurrency = tonumber(ARGV[2])
local lease = tonumber(ARGV[4])
local shared = tonumber(redis.call('HGET', KEYS[2], 'delay')) or 0
local delay = math.max(tonumber(ARGV[3]), shared)
-- Leases of requests whose worker died (or never released) run out here.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local next_start = tonumber(redis.call('HGET', KEYS[2], 'next')) or 0
if next_start > now then
  return {0, next_start - now, shared}
end
if redis.call('ZCARD', KEYS[1]) >= concurrency then
  return {-1, tonumber(ARGV[5]), shared}
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.ceil(lease / 1000))
redis.call('HSET', KEYS[2], 'next', now + delay)
redis.call('PEXPIRE', KEYS[2], math.max(tonumber(ARGV[6]), math.ceil(delay / 1000)))
return {1, 0, shared}
