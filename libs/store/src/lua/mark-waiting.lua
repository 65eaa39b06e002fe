--[[
  Records that an operation waits without being claimed (every provider of its
  channel behind an open circuit breaker; its quiet hours), so `singleshot ops
  show` can say so. Waiting is not an attempt: attempts, fence, lock and
  status are untouched, except that an operation never claimed before gets its
  state hash with status pending (claim.lua fills in the rest at the first
  claim). A terminal operation is left alone. The claim clears both fields.
  A deferral to the end of quiet hours is journaled (`deferred`), once per
  wake-up time: a job that comes back inside the same window writes nothing new.

  Input:
    KEYS[1] operation state hash
    KEYS[2] journal stream of the operation's shard
    KEYS[3] layout version of the operation's shard (include/layout.lua)

    ARGV[1] options (JSON, ScriptOptions['mark-waiting'] in script-options.ts):
      reason       why it waits (breaker_open, quiet_hours)
      untilMs      when it is tried again (ms since epoch)
      now          ms
      operationKey, messageKey, recipient, channel   (for the journal entry)
      retentionMs  expiry of a state hash created here
      journalMinId journal MINID

  Output:
    { "upgrade_required", held }  the shard holds another layout (include/layout.lua): nothing done
    1 when recorded, 0 when the operation is terminal
]]
--@include "include/layout.lua"
--@include "include/terminal.lua"
--@include "include/journal.lua"
local refusedBy = layoutRefusal(KEYS[3])
if refusedBy then return { 'upgrade_required', refusedBy } end
local opKey, journalKey = KEYS[1], KEYS[2]
local o = cjson.decode(ARGV[1])
local h = redis.call('HMGET', opKey, 'status', 'waitingReason', 'waitingUntil', 'journalIds')
local status = h[1]
if isTerminal(status) then return 0 end
local fields = { 'waitingReason', o.reason, 'waitingUntil', o.untilMs }
if o.reason == 'quiet_hours' and (h[2] ~= o.reason or h[3] ~= o.untilMs) then
  local id = journalAdd(journalKey, o.journalMinId, { type = 'deferred', op = o.operationKey, msg = o.messageKey,
    recipient = o.recipient, channel = o.channel, reason = o.reason, ts = o.now })
  fields[#fields + 1] = 'journalIds'
  fields[#fields + 1] = h[4] and (h[4] .. ',' .. id) or id
end
if status then
  redis.call('HSET', opKey, unpack(fields))
else
  redis.call('HSET', opKey, 'status', 'pending', 'messageKey', o.messageKey, 'recipient', o.recipient,
    'channel', o.channel, unpack(fields))
  redis.call('PEXPIRE', opKey, o.retentionMs)
end
return 1
