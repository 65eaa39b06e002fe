--[[
  One page of a shard's suppression list, newest on the list first, after a
  cursor; on the way it drops the recipients whose every entry has expired
  (nothing else changes when a suppression expires, so the list is pruned
  here, lazily; suppression-write.lua keeps it for every change).

  Input:
    KEYS[1] the suppression list index of one shard (recipients by when they went onto the list)
    KEYS[2] the expiry index of the same shard

    ARGV[1] options (JSON, ScriptOptions['suppression-page'] in script-options.ts):
      now        ms since the epoch
      count      how many recipients to look at, at most
      score      with recipient, the cursor: the page starts after this
      recipient  (score, recipient) in the index's order; absent: from the top

  Output:
    { more (1|0), lastScore, lastRecipient, recipient1, score1, ... }
    the recipients looked at that are still on the list, in order; `last…`
    is the last one looked at ('' when none), the cursor of the next call,
    and `more` says whether any come after it.
]]
local index, expiry = KEYS[1], KEYS[2]
local o = cjson.decode(ARGV[1])
local now = tonumber(o.now)

-- A bounded step of the pruning (a script holds Redis while it runs); what
-- is left is skipped below and dropped by the next calls.
local gone = redis.call('ZRANGEBYSCORE', expiry, '-inf', o.now, 'LIMIT', 0, 500)
if #gone > 0 then
  redis.call('ZREM', index, unpack(gone))
  redis.call('ZREM', expiry, unpack(gone))
end

-- Where the cursor is (or would be) in the index: the recipient put at its
-- score for the moment it takes to read the rank (how many others come
-- before it), so ties and a recipient that has left the list since are both
-- placed as Redis orders members. Back at its own score, the recipient counts
-- before the page when that is not lower than the cursor's (at the cursor's
-- own score it is the cursor itself, read already).
local start = 0
if o.score then
  local held = redis.call('ZSCORE', index, o.recipient)
  redis.call('ZADD', index, o.score, o.recipient)
  start = redis.call('ZREVRANK', index, o.recipient)
  if held then
    redis.call('ZADD', index, held, o.recipient)
    if tonumber(held) >= tonumber(o.score) then start = start + 1 end
  else
    redis.call('ZREM', index, o.recipient)
  end
end

local page = redis.call('ZREVRANGE', index, start, start + o.count - 1, 'WITHSCORES')
local more = redis.call('ZCARD', index) > start + #page / 2
local out = { 0, '', '' }
for i = 1, #page, 2 do
  local r, s = page[i], page[i + 1]
  out[2], out[3] = s, r
  local e = redis.call('ZSCORE', expiry, r)
  if e and tonumber(e) <= now then
    redis.call('ZREM', index, r)
    redis.call('ZREM', expiry, r)
  else
    out[#out + 1] = r
    out[#out + 1] = s
  end
end
if more then out[1] = 1 end
return out
