--[[
  Record the decision of a message: the operations it fanned out to. Only the
  first decision counts (a redelivered decide job gets 0 and adds the same
  fields again, which changes nothing).

  Input:
    KEYS[1] message record hash

    ARGV[1] options (JSON, ScriptOptions['message-decided-1'] in script-options.ts):
      now            ms
      operationKeys  the message's operation keys (each a field, value empty)
      retentionMs    record expiry
      trace          optional: the decision's W3C traceparent (tracing on), kept with the first decision

  Output:
    1 for the first decision, else 0

  One script instead of MULTI: on a connection that also carries BullMQ's
  scripts, ioredis's multi() copies every script onto each transaction object,
  a cost the decision worker paid on every message.
]]
--@include "include/retain.lua"
local key = KEYS[1]
local o = cjson.decode(ARGV[1])
local first = redis.call('HSETNX', key, 'decidedAt', o.now)
if first == 1 and type(o.trace) == 'string' then redis.call('HSET', key, 'trace', o.trace) end
local ops = o.operationKeys
if #ops > 0 then
  local args = {}
  for i = 1, #ops do
    args[2 * i - 1] = ops[i]
    args[2 * i] = ''
  end
  redis.call('HSET', key, unpack(args))
  retain(key, o.retentionMs)
end
return first
