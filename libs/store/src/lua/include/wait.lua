-- markWait(opKey, journalKey, indexKey, o): the claim's answer to an operation
-- that may not go now although nothing ended it, in place of the lock: its
-- quiet hours, a document not stored yet, every provider of its channel behind
-- an open breaker (o.waitReason, worked out before the claim and passed in).
-- One mark for every reason: waitingReason, waitingUntil, waitingSince, and for
-- a document waitingFor and waitingKey; `ops show`, the dashboard and the
-- journal read every wait the same way. Waiting is never an attempt: attempts,
-- fence, lock and status are untouched, except that an operation never claimed
-- before gets its state hash with status pending (its first claim fills in the
-- rest). The claim that goes, the claim's own suppression and a cancel clear
-- the mark (claim.lua's clearWaiting, cancel-op.lua).
--
-- A wait for something that will arrive (waitingKey: the document) is listed
-- in the shard's waiting index, oldest first (the dashboard, the document
-- gauge). A deferral to the end of quiet hours is journaled (`deferred`) once
-- per wake-up time: a job that comes back inside the same window writes
-- nothing new. Returns '1' when a new wait began, '' when the same one goes on.
local function markWait(opKey, journalKey, indexKey, status, o)
  local h = redis.call('HMGET', opKey, 'waitingReason', 'waitingUntil', 'waitingFor', 'journalIds')
  local waitingFor, waitingKey = o.waitingFor or '', o.waitingKey or ''
  local same = h[1] == o.waitReason and (h[3] or '') == waitingFor
  if same and h[2] == o.waitUntil then return '' end
  local fields = { 'waitingReason', o.waitReason, 'waitingUntil', o.waitUntil }
  local function put(name, value)
    fields[#fields + 1] = name
    fields[#fields + 1] = value
  end
  if o.waitReason == 'quiet_hours' then
    local id = journalAdd(journalKey, o.journalMinId, { type = 'deferred', op = o.operationKey, msg = o.messageKey,
      recipient = o.recipient, channel = o.channel, reason = o.waitReason, ts = o.now })
    put('journalIds', h[4] and (h[4] .. ',' .. id) or id)
  end
  if not same then
    put('waitingSince', o.now)
    put('updatedAt', o.now)
    if waitingFor ~= '' then
      put('waitingFor', waitingFor)
      put('waitingKey', waitingKey)
    elseif h[3] then
      redis.call('HDEL', opKey, 'waitingFor', 'waitingKey')
    end
  end
  if not status then
    put('status', 'pending')
    put('messageKey', o.messageKey)
    put('recipient', o.recipient)
    put('channel', o.channel)
  end
  redis.call('HSET', opKey, unpack(fields))
  if not same then
    if waitingKey ~= '' then redis.call('ZADD', indexKey, 'NX', o.now, o.operationKey)
    elseif h[3] then redis.call('ZREM', indexKey, o.operationKey) end
  end
  retain(opKey, o.retentionMs)
  return same and '' or '1'
end
