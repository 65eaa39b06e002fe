--[[
  Create an operation that is due later (send-at, a route's delay), visible
  at once as `scheduled` (`ops show`, the scheduled gauge), with its deliver
  job stored so the sweeper can enqueue it again should the delayed job be
  lost. Waiting is not an attempt: attempts, fence and lock are untouched.
  An operation that exists already (a redelivered decision, a cancel that came
  first) is left as it is.

  Input:
    KEYS[1] operation state hash
    KEYS[2] operation data hash (the stored deliver job)
    KEYS[3] journal stream of the operation's shard
    KEYS[4] active index of the operation's shard (recovery sweeper)
    KEYS[5] scheduled index of the operation's shard
    KEYS[6] layout version of the operation's shard (include/layout.lua)

    ARGV[1] options (JSON, ScriptOptions['op-schedule'] in script-options.ts):
      now            ms
      dueAt          when it may be sent (ms)
      sweepAt        when the sweeper looks at it if nobody claimed it (ms, after dueAt)
      reason         send_at | delay
      operationKey, messageKey, recipient, channel
      retentionMs    state expiry
      journalMinId   journal MINID
    ARGV[2] the deliver job as JSON

  Output:
    { "upgrade_required", held }  the shard holds another layout (include/layout.lua): nothing done
    1 when scheduled, 0 when the operation existed already
]]
--@include "include/layout.lua"
--@include "include/journal.lua"
--@include "include/retain.lua"
local refusedBy = layoutRefusal(KEYS[6])
if refusedBy then return { 'upgrade_required', refusedBy } end
local opKey, dataKey, journalKey, indexKey, scheduledKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local o = cjson.decode(ARGV[1])
if redis.call('EXISTS', opKey) == 1 then return 0 end
local id = journalAdd(journalKey, o.journalMinId, { type = 'scheduled', op = o.operationKey, msg = o.messageKey,
  recipient = o.recipient, channel = o.channel, reason = o.reason, ts = o.now })
redis.call('HSET', opKey, 'status', 'scheduled', 'attempts', '0', 'createdAt', o.now, 'updatedAt', o.now,
  'scheduledFor', o.dueAt, 'scheduleReason', o.reason, 'messageKey', o.messageKey, 'recipient', o.recipient,
  'channel', o.channel, 'journalIds', id)
retain(opKey, o.retentionMs)
redis.call('HSET', dataKey, 'job', ARGV[2])
retain(dataKey, o.retentionMs)
redis.call('ZADD', indexKey, o.sweepAt, o.operationKey)
redis.call('ZADD', scheduledKey, o.dueAt, o.operationKey)
return 1
