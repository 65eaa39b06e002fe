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
local function retain(key, retentionMs)
  local r = tonumber(retentionMs)
  if redis.call('PTTL', key) >= r then return end
  redis.call('PEXPIRE', key, string.format('%d', r + math.min(3600000, math.floor(r / 100))))
end
