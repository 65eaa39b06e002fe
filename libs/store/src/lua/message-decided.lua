--[[
  Record the decision of a message: the operations it fanned out to, before
  any of them is enqueued, and read in the same step whether the message was
  cancelled (cancel-message.lua). Only the first decision counts (a
  redelivered decide job gets 0 and adds the same fields again, which changes
  nothing).

  A cancel and a fan-out of one message meet here, in the message's own slot:
  either this runs first, and the cancel finds every operation of the message
  and cancels each (cancel-op.lua), or the cancel runs first, and this
  returns its tombstone, so that every operation it covers is born cancelled.
  No operation of the message can be claimed before this ran (its deliver job
  does not exist yet), so none slips between the two.

  One call records the decisions of one or more messages (those the decide
  jobs of one turn made), each as if in a call of its own.

  Input, for the i-th message: KEYS[i] is its KEYS[1] below, and its ARGV
  follow the messages before it (runEach in scripts.ts):
    KEYS[1] message record hash

    options (JSON, ScriptOptions['message-decided'] in script-options.ts):
      now            ms
      operationKeys  the message's operation keys (each a field)
      targets        per operation key, `channel:recipient` (the field's value:
                     what a cancel of some recipients needs to know)
      retentionMs    record expiry
      digestGroups   optional: the digest groups the message joins (each a
                     field `dg:<group>`, so a cancel finds the digests to take
                     it out of: digest-remove.lua)
      digestTargets  per group, JSON [route, recipient, key, channel] (the field's value)
      trace          optional: the decision's W3C traceparent (tracing on), kept with the first decision

    the number of documents that follow (0)

  Output: a list with one answer per message, in their order:
    { "script_error", message }   a key of this item has the wrong type (include/each.lua): what it wrote
                                  before stays; any other error fails the whole call
    { first (1|0), cancelled, cancelledBy, cancelReason }
    cancelled is false, '*' (every recipient) or a JSON array of recipients;
    who cancelled and why, for the journal entries of the operations born cancelled

  One script instead of MULTI: on a connection that also carries BullMQ's
  scripts, ioredis's multi() copies every script onto each transaction object,
  a cost the decision worker paid on every message.
]]
--@include "include/retain.lua"
--@include "include/each.lua"
-- One message's decision: K[1] is its message record, o its options.
local function decideOne(K, o)
  local key = K[1]
  local first = redis.call('HSETNX', key, 'decidedAt', o.now)
  if first == 1 and type(o.trace) == 'string' then redis.call('HSET', key, 'trace', o.trace) end
  local ops, targets = o.operationKeys, o.targets
  if #ops > 0 then
    local args = {}
    for i = 1, #ops do
      args[2 * i - 1] = ops[i]
      args[2 * i] = targets[i] or ''
    end
    redis.call('HSET', key, unpack(args))
    retain(key, o.retentionMs)
  end
  local groups = o.digestGroups
  if type(groups) == 'table' and #groups > 0 then
    local args = {}
    for i = 1, #groups do
      args[2 * i - 1] = 'dg:' .. groups[i]
      args[2 * i] = o.digestTargets[i] or ''
    end
    redis.call('HSET', key, unpack(args))
    retain(key, o.retentionMs)
  end
  local t = redis.call('HMGET', key, 'cancelRecipients', 'cancelledBy', 'cancelReason')
  return { first, t[1], t[2] or '', t[3] or '' }
end

-- In the order given: a decision repeated in one call answers as calls one
-- after the other would (the first is the first decision).
return eachItem(1, decideOne)
