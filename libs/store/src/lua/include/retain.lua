-- retain(key, retentionMs): keeps `key` at least `retentionMs` (a decimal
-- string) past now, writing an expiry only when the one it has falls short.
-- A new expiry goes a slack further out (1% of the retention, at most an
-- hour), so the writes of one record that come close together (an event's
-- parallel arrivals and its decision; a claim and its commit) set it once
-- instead of each time: every PEXPIRE is one more command to run, to append
-- to the AOF and to rewrite (they were a seventh of the AOF). A record thus
-- lives between retentionMs and retentionMs + slack past its last write,
-- never less (docs/protocol.md invariant 8). PTTL is -2 for a key that does
-- not exist (PEXPIRE is then a no-op) and -1 for one without an expiry.
local function retainFor(r)
  return string.format('%d', r + math.min(3600000, math.floor(r / 100)))
end
local function retain(key, retentionMs)
  local r = tonumber(retentionMs)
  if redis.call('PTTL', key) >= r then return end
  redis.call('PEXPIRE', key, retainFor(r))
end
-- retainNew(key, retentionMs): the same for a key this script has just
-- created (its first write, seen in what the script read or in what the write
-- answered), which has no expiry to read: the PTTL would only say -1. Should
-- the key have existed after all, the write still never shortens its expiry,
-- as long as the callers keep to one rule: a key whose expiry was written
-- with a longer retention (a scheduled operation's, op-schedule.lua) is never
-- taken for new, since what wrote that expiry left fields a caller reads.
local function retainNew(key, retentionMs)
  redis.call('PEXPIRE', key, retainFor(tonumber(retentionMs)))
end
