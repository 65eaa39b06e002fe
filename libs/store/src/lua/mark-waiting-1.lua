--[[
  Records that an operation waits without being claimed (every provider of its
  channel behind an open circuit breaker), so `singleshot ops show` can say so.
  Waiting is not an attempt: attempts, fence, lock and status are untouched,
  except that an operation never claimed before gets its state hash with
  status pending (claim-5.lua fills in the rest at the first claim). A
  terminal operation is left alone. The claim clears both fields.

  Input:
    KEYS[1] operation state hash

    ARGV[1] options (JSON, ScriptOptions['mark-waiting-1'] in script-options.ts):
      reason       why it waits (breaker_open)
      untilMs      when it is tried again (ms since epoch)
      retentionMs  expiry of a state hash created here

  Output:
    1 when recorded, 0 when the operation is terminal
]]
--@include "include/terminal.lua"
local opKey = KEYS[1]
local o = cjson.decode(ARGV[1])
local status = redis.call('HGET', opKey, 'status')
if isTerminal(status) then return 0 end
if status then
  redis.call('HSET', opKey, 'waitingReason', o.reason, 'waitingUntil', o.untilMs)
else
  redis.call('HSET', opKey, 'status', 'pending', 'waitingReason', o.reason, 'waitingUntil', o.untilMs)
  redis.call('PEXPIRE', opKey, o.retentionMs)
end
return 1
