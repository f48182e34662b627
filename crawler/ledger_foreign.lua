-- KEYS: articles, owners set, feed owners hash.
-- ARGV: alive prefix, held prefix, owner (this process), its worker name, limit.
-- Read only: what other owners hold that is not done yet (pending article claims they own,
-- feed polls they lease), split by whether the owner has a heartbeat. An earlier life of this
-- worker counts as gone, as in ledger_recover_owners.lua (taken over at once). A held entry no
-- longer that owner's (done, handed on) is not counted. At most `limit` held entries are looked
-- at in all: the counts are then lower bounds, and `more` says so.
local articles, owners, feed_owners = KEYS[1], KEYS[2], KEYS[3]
local alive, held, me, my_worker = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local budget = tonumber(ARGV[5])
-- Is a held entry (`a|<article>`, `f|<feed>`) still owner w's, and not done?
local function still_held(w, entry)
  local id = string.sub(entry, 3)
  if string.sub(entry, 1, 1) ~= 'a' then return redis.call('HGET', feed_owners, id) == w end
  local raw = redis.call('HGET', articles, id)
  if not raw then return false end
  local rec = cjson.decode(raw)
  return rec.s == 'p' and rec.o == w
end
local live, live_owners, gone, gone_owners = 0, 0, 0, 0
for _, w in ipairs(redis.call('SMEMBERS', owners)) do
  if budget <= 0 then break end
  if w ~= me then
    local n = 0
    local entries = redis.call('SRANDMEMBER', held .. w, budget)
    budget = budget - #entries
    for _, entry in ipairs(entries) do
      if still_held(w, entry) then n = n + 1 end
    end
    if n > 0 then
      local worker = string.match(w, '^(.*)/[^/]*$') or w
      if worker ~= my_worker and redis.call('EXISTS', alive .. w) == 1 then
        live, live_owners = live + n, live_owners + 1
      else
        gone, gone_owners = gone + n, gone_owners + 1
      end
    end
  end
end
return cjson.encode({live = live, live_owners = live_owners, gone = gone,
                     gone_owners = gone_owners, more = budget <= 0})
