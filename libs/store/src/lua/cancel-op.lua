--[[
  Cancel one operation: the same compare-and-set on the operation's state that
  claim.lua makes, so an operation is either cancelled or claimed, never
  both, and the caller learns which.

  Input:
    KEYS[1] operation state hash
    KEYS[2] operation lock
    KEYS[3] journal stream of the operation's shard
    KEYS[4] active index of the operation's shard (recovery sweeper)
    KEYS[5] scheduled index of the operation's shard
    KEYS[6] waiting index of the operation's shard (op-wait.lua)
    KEYS[7] layout version of the operation's shard (include/layout.lua)

    ARGV[1] options (JSON, ScriptOptions['cancel-op'] in script-options.ts):
      now            ms
      operationKey, messageKey, recipient, channel   (recipient and channel may be
                     empty when the caller does not know them; the state's win)
      reason         the producer's reason (may be empty)
      by             who cancelled (producer key name, operator)
      retentionMs    state expiry
      journalMinId   journal MINID

  Output:
    { "upgrade_required", held }  the shard holds another layout (include/layout.lua): nothing done
    { outcome, recipient, channel }, outcome one of
      cancelled          it was not being attempted: it never will be (journaled once)
      in_flight          an attempt holds it, or one may have reached a provider
                         (sending, in_doubt): marked, it ends sent (if that attempt
                         got through) or cancelled, never sent anew
      already_cancelled  cancelled before (nothing written)
      already_sent | already_dead | already_suppressed
]]
--@include "include/layout.lua"
--@include "include/journal.lua"
--@include "include/retain.lua"
local refusedBy = layoutRefusal(KEYS[7])
if refusedBy then return { 'upgrade_required', refusedBy } end
local opKey, lockKey, journalKey, indexKey, scheduledKey, waitingKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local o = cjson.decode(ARGV[1])
local now = o.now

local h = redis.call('HMGET', opKey, 'status', 'cancelRequested', 'recipient', 'channel', 'journalIds', 'createdAt', 'waitingReason')
local status = h[1]
local recipient = h[3] or o.recipient
local channel = h[4] or o.channel
if status == 'sent' or status == 'dead' or status == 'suppressed' then
  return { 'already_' .. status, recipient, channel }
end
if status == 'cancelled' then return { 'already_cancelled', recipient, channel } end

-- In flight: the lock is held, or an attempt may have reached a provider. The
-- holder's commit (commit.lua) or the next claim's reconciliation ends it.
if redis.call('EXISTS', lockKey) == 1 or status == 'sending' or status == 'in_doubt' then
  if not h[2] then
    redis.call('HSET', opKey, 'cancelRequested', now, 'cancelReason', o.reason, 'cancelledBy', o.by)
  end
  return { 'in_flight', recipient, channel }
end

-- Pending, failed (a retry waits), scheduled, waiting, or no state yet (its
-- deliver job not claimed so far): cancelled now; every later claim finds it so.
local id = journalAdd(journalKey, o.journalMinId, { type = 'cancelled', op = o.operationKey, msg = o.messageKey,
  recipient = recipient, channel = channel, by = o.by, reason = o.reason, ts = now })
local fields = { 'status', 'cancelled', 'updatedAt', now, 'cancelReason', o.reason, 'cancelledBy', o.by,
  'journalIds', h[5] and (h[5] .. ',' .. id) or id }
if not h[6] then
  fields[#fields + 1] = 'createdAt'
  fields[#fields + 1] = now
  fields[#fields + 1] = 'messageKey'
  fields[#fields + 1] = o.messageKey
  if recipient ~= '' then
    fields[#fields + 1] = 'recipient'
    fields[#fields + 1] = recipient
  end
  if channel ~= '' then
    fields[#fields + 1] = 'channel'
    fields[#fields + 1] = channel
  end
end
redis.call('HSET', opKey, unpack(fields))
redis.call('HDEL', opKey, 'waitingReason', 'waitingUntil', 'waitingSince', 'waitingFor', 'waitingKey', 'scheduledFor',
  'scheduleReason', 'owner', 'leaseUntil')
redis.call('ZREM', indexKey, o.operationKey)
redis.call('ZREM', scheduledKey, o.operationKey)
if h[7] then redis.call('ZREM', waitingKey, o.operationKey) end
retain(opKey, o.retentionMs)
return { 'cancelled', recipient, channel }
