--[[
  Marks an operation as waiting (for its document) or clears the mark, so the
  wait is visible: `ops show`, the waiting gauge, the dashboard. The mark is
  never an attempt: the attempt counter is not touched.

  Input:
    KEYS[1] operation state hash
    KEYS[2] waiting index of the operation's shard (sorted set, score = since)
    KEYS[3] layout version of the operation's shard (include/layout.lua)

    ARGV[1] options (JSON, ScriptOptions['op-wait'] in script-options.ts):
      mode          set | clear
      operationKey
      now           ms
      waitingFor    what it waits for (e.g. `document:purchase-order`), set only
      waitingKey    the key of what it waits for (the document key), set only
      retentionMs   state expiry, set only
      messageKey, recipient, channel   set only (an operation never claimed yet)

  Output:
    { "upgrade_required", held }  the shard holds another layout (include/layout.lua): nothing done
    1 when the mark changed, 0 otherwise (terminal operations are never marked)
]]
--@include "include/layout.lua"
local refusedBy = layoutRefusal(KEYS[3])
if refusedBy then return { 'upgrade_required', refusedBy } end
local o = cjson.decode(ARGV[1])
local opKey, indexKey = KEYS[1], KEYS[2]
if o.mode == 'clear' then
  redis.call('HDEL', opKey, 'waitingFor', 'waitingKey', 'waitingSince')
  return redis.call('ZREM', indexKey, o.operationKey)
end
local h = redis.call('HMGET', opKey, 'status', 'waitingFor')
local status = h[1]
if status == 'sent' or status == 'dead' or status == 'suppressed' then return 0 end
if h[2] == o.waitingFor then return 0 end
if status then
  redis.call('HSET', opKey, 'waitingFor', o.waitingFor, 'waitingKey', o.waitingKey, 'waitingSince', o.now, 'updatedAt', o.now)
else
  redis.call('HSET', opKey, 'waitingFor', o.waitingFor, 'waitingKey', o.waitingKey, 'waitingSince', o.now, 'updatedAt', o.now,
    'status', 'pending', 'messageKey', o.messageKey, 'recipient', o.recipient, 'channel', o.channel)
end
redis.call('PEXPIRE', opKey, o.retentionMs)
redis.call('ZADD', indexKey, 'NX', o.now, o.operationKey)
return 1
