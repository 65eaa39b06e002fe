--[[
  Cancel a message, or some of its recipients: leave a tombstone on the
  message record, and read the operations its decision recorded
  (message-decided.lua), in one step in the message's slot. The caller then
  cancels each of those operations (cancel-op.lua); a decision that comes
  later reads the tombstone and makes every operation it covers cancelled
  from the start. The record may not exist yet (a cancel before its event):
  the tombstone is kept for the retention period and waits for it.

  Input:
    KEYS[1] message record hash

    ARGV[1] options (JSON, ScriptOptions['cancel-message'] in script-options.ts):
      now          ms
      recipients   the normalized recipients to cancel (JSON array), absent for all
      reason       the producer's reason (may be empty)
      by           who cancelled
      retentionMs  record expiry

  Output:
    { decided (1|0), first (1|0), opKey1, target1, opKey2, target2, ... }
    decided: the decision recorded its operations; first: this is the
    message's first cancel (for the journal and metrics). target is
    `channel:recipient` ('' for an operation recorded without its target).
    A digest membership the decision recorded comes as the pair
    `dg:<group>`, JSON [route, recipient, key, channel], for the caller to take the
    message out of that digest (digest-remove.lua).
]]
--@include "include/retain.lua"
--@include "include/tombstone.lua"
local key = KEYS[1]
local o = cjson.decode(ARGV[1])
local decided = redis.call('HEXISTS', key, 'decidedAt')
local first = tombstone(key, o)
retain(key, o.retentionMs)

local out = { decided, first and 1 or 0 }
local all = redis.call('HGETALL', key)
for i = 1, #all, 2 do
  local field = all[i]
  if isKeyField(field) or string.sub(field, 1, 3) == 'dg:' then
    out[#out + 1] = field
    out[#out + 1] = all[i + 1]
  end
end
return out
