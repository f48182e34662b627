-- Output marks: the journal is about to write these article versions (pipelines/journal.py).
-- KEYS: articles. ARGV: per mark: key, version, the done mark's counts (JSON [[hash, field]...]).
-- A worker killed between its journal line and its done mark leaves the mark: the take-over
-- (ledger_recover_owners.lua) then reads that worker's journal, and marks the article done if
-- its line is there instead of handing it out again (it would appear in two journals).
-- Returns one result per mark: 1 marked, 0 not the pending version.
local results = {}
for i = 1, #ARGV, 3 do
  local result = 0
  local raw = redis.call('HGET', KEYS[1], ARGV[i])
  if raw then
    local ok, rec = pcall(cjson.decode, raw)
    if ok and type(rec) == 'table' and rec.v == tonumber(ARGV[i + 1]) and rec.s == 'p' then
      rec.j, rec.m = cjson.decode(ARGV[i + 2]), nil  -- written by its owner, rec.o
      redis.call('HSET', KEYS[1], ARGV[i], cjson.encode(rec))
      result = 1
    end
  end
  results[#results + 1] = result
end
return results
