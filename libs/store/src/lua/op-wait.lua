--[[
  Marks an operation as waiting without a claim: inside its quiet hours, every
  provider of its channel behind an open breaker, or a document it needs not
  stored yet. One mark for every reason (waitingReason, waitingUntil,
  waitingSince, and for a document what and which key it waits for), so
  `ops show`, the dashboard and the journal read every wait the same way.
  Waiting is never an attempt: attempts, fence, lock and status are untouched,
  except that an operation never claimed before gets its state hash with
  status pending (claim.lua fills in the rest at its first claim). A terminal
  operation is left alone. The mark is cleared where the wait ends: by the
  claim (claim.lua), by a cancel (cancel-op.lua), by the claim's own
  suppression; nothing else clears it, so there is no window in which an
  operation waits unmarked.

  A wait for something that will arrive (waitingKey: the document) is also
  listed in the shard's waiting index, oldest first (the dashboard, the
  document gauge). A deferral to the end of quiet hours is journaled
  (`deferred`) once per wake-up time: a job that comes back inside the same
  window writes nothing new.

  Input:
    KEYS[1] operation state hash
    KEYS[2] journal stream of the operation's shard
    KEYS[3] waiting index of the operation's shard (sorted set, score = since)
    KEYS[4] layout version of the operation's shard (include/layout.lua)

    ARGV[1] options (JSON, ScriptOptions['op-wait'] in script-options.ts):
      reason       why it waits (quiet_hours, breaker_open, document)
      untilMs      when it is looked at again (ms since epoch)
      waitingFor   what it waits for, e.g. `document:purchase-order` ('' for none)
      waitingKey   the key of what it waits for: the document key ('' for none)
      now          ms
      operationKey, messageKey, recipient, channel   (for a new hash and the journal entry)
      retentionMs  expiry of a state hash created here
      journalMinId journal MINID

  Output:
    { "upgrade_required", held }  the shard holds another layout (include/layout.lua): nothing done
    1 when a new wait began (another reason or another thing waited for),
    0 when the same wait goes on or the operation is terminal
]]
--@include "include/layout.lua"
--@include "include/terminal.lua"
--@include "include/journal.lua"
--@include "include/retain.lua"
local refusedBy = layoutRefusal(KEYS[4])
if refusedBy then return { 'upgrade_required', refusedBy } end
local opKey, journalKey, indexKey = KEYS[1], KEYS[2], KEYS[3]
local o = cjson.decode(ARGV[1])
local h = redis.call('HMGET', opKey, 'status', 'waitingReason', 'waitingUntil', 'waitingFor', 'journalIds')
local status = h[1]
if isTerminal(status) then return 0 end
local same = h[2] == o.reason and (h[4] or '') == o.waitingFor
if same and h[3] == o.untilMs then return 0 end
local fields = { 'waitingReason', o.reason, 'waitingUntil', o.untilMs }
if o.reason == 'quiet_hours' then
  local id = journalAdd(journalKey, o.journalMinId, { type = 'deferred', op = o.operationKey, msg = o.messageKey,
    recipient = o.recipient, channel = o.channel, reason = o.reason, ts = o.now })
  fields[#fields + 1] = 'journalIds'
  fields[#fields + 1] = h[5] and (h[5] .. ',' .. id) or id
end
if not same then
  for _, v in ipairs({ 'waitingSince', o.now, 'updatedAt', o.now }) do fields[#fields + 1] = v end
  if o.waitingFor ~= '' then
    for _, v in ipairs({ 'waitingFor', o.waitingFor, 'waitingKey', o.waitingKey }) do fields[#fields + 1] = v end
  elseif h[4] then
    redis.call('HDEL', opKey, 'waitingFor', 'waitingKey')
  end
end
if not status then
  for _, v in ipairs({ 'status', 'pending', 'messageKey', o.messageKey, 'recipient', o.recipient, 'channel', o.channel }) do
    fields[#fields + 1] = v
  end
end
redis.call('HSET', opKey, unpack(fields))
if not same then
  if o.waitingKey ~= '' then redis.call('ZADD', indexKey, 'NX', o.now, o.operationKey)
  elseif h[4] then redis.call('ZREM', indexKey, o.operationKey) end
end
retain(opKey, o.retentionMs)
return same and 0 or 1
