-- One request to a domain asks to start now, whichever worker sends it (crawler/politeness.py).
-- KEYS[1] slots: sorted set, lease token -> lease end (µs); KEYS[2] state: hash with `next` (the
-- earliest start of the domain's next request, µs) and `delay` (the delay AutoThrottle last
-- published for the domain, µs).
-- ARGV: token, concurrency, floor delay (µs: DOWNLOAD_DELAY or robots.txt crawl-delay, plus the
-- margin that keeps it at the server), lease (µs), poll (µs: when to ask again if every slot is
-- taken), state TTL (ms), "1" when workers keep heartbeats ("" when not), the grace (µs) before
-- a lease whose worker has no heartbeat is taken back, this process's worker name and owner id
-- (`<worker>/<life>`): a lease of the same worker's earlier life is taken back at once (a worker
-- restarted with the same WORKER_ID: that life is over); then the owners the caller found
-- without a heartbeat (their leases past the grace are taken back).
-- A token is `<owner>#<serial>`. The heartbeats (the ledger's, crawler/ledger.py) live in
-- another hash slot than the domain's keys: this script touches only the domain's slot (a Redis
-- Cluster runs it on that slot's node), and returns the owners of leases past the grace that it
-- was not told are dead, for the caller to look up (crawler/politeness.py, Heartbeats).
-- Returns {answer, µs to wait before asking again, shared delay µs, those owners}; answer 1: go
-- (slot leased), 0: too soon after the last start, -1: every slot taken.
-- Time is Redis's own clock (TIME), so workers on machines whose clocks disagree still agree.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local concurrency = tonumber(ARGV[2])
local lease = tonumber(ARGV[4])
local shared = tonumber(redis.call('HGET', KEYS[2], 'delay')) or 0
local delay = math.max(tonumber(ARGV[3]), shared)
-- Leases of requests whose worker died (or never released) run out here.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
-- ... and at once when their worker's heartbeat is gone (kill -9), once past the grace: a lease
-- taken just before its worker's first heartbeat stays.
local suspects, listed = {}, {}
if ARGV[7] ~= '' then
  local grace = tonumber(ARGV[8])
  local dead = {}
  for i = 11, #ARGV do dead[ARGV[i]] = true end
  local held = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
  for i = 1, #held, 2 do
    local owner = string.match(held[i], '^(.*)#[^#]*$')
    if owner and owner ~= ARGV[10] then
      local earlier_life = string.match(owner, '^(.*)/[^/]*$') == ARGV[9]
      local taken_at = tonumber(held[i + 1]) - lease
      if earlier_life or (now - taken_at > grace and dead[owner]) then
        redis.call('ZREM', KEYS[1], held[i])
      elseif now - taken_at > grace and not listed[owner] then
        listed[owner] = true
        suspects[#suspects + 1] = owner
      end
    end
  end
end
local next_start = tonumber(redis.call('HGET', KEYS[2], 'next')) or 0
if next_start > now then
  return {0, next_start - now, shared, suspects}
end
if redis.call('ZCARD', KEYS[1]) >= concurrency then
  return {-1, tonumber(ARGV[5]), shared, suspects}
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.ceil(lease / 1000))
redis.call('HSET', KEYS[2], 'next', now + delay)
redis.call('PEXPIRE', KEYS[2], math.max(tonumber(ARGV[6]), math.ceil(delay / 1000)))
return {1, 0, shared, suspects}
