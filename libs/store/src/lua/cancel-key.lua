--[[
  A producer's cancellation key (for example `order-o-9`, set on one or more
  events): the messages that carry it, and its tombstone once cancelled. Both
  sides go through this one script in the key's slot, so a cancel and an
  event that carries the key meet in order: either the message joined first,
  and the cancel gets it among the members, or the cancel came first, and the
  joining message gets the tombstone back (the decision then cancels it
  before it fans out, cancel-message.lua).

  Input:
    KEYS[1] cancellation key record hash

    ARGV[1] options (JSON, ScriptOptions['cancel-key'] in script-options.ts):
      mode         join | cancel
      now          ms
      messageKey   with join: the joining message
      recipients   with cancel: the normalized recipients (JSON array), absent for all
      reason       with cancel: the producer's reason
      by           with cancel: who cancelled
      retentionMs  record expiry

  Output:
    join:   { recipients or false, reason, by }   the tombstone, if cancelled
    cancel: { first (1|0), messageKey1, messageKey2, ... }
]]
--@include "include/retain.lua"
--@include "include/tombstone.lua"
local key = KEYS[1]
local o = cjson.decode(ARGV[1])
if o.mode == 'join' then
  redis.call('HSET', key, o.messageKey, '')
  retain(key, o.retentionMs)
  local t = redis.call('HMGET', key, 'cancelRecipients', 'cancelReason', 'cancelledBy')
  return { t[1], t[2] or '', t[3] or '' }
end

local first = tombstone(key, o)
retain(key, o.retentionMs)
local out = { first and 1 or 0 }
local all = redis.call('HGETALL', key)
for i = 1, #all, 2 do
  local field = all[i]
  if isKeyField(field) then out[#out + 1] = field end
end
return out
