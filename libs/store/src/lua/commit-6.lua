--[[
  Fenced commit of an attempt's outcome (DESIGN.md invariants 4 and 10): state,
  journal entry, history entry, sweeper index and lock release in one step,
  rejected when the caller's fence token was superseded by a later claim.

  Input:
    KEYS[1] operation state hash
    KEYS[2] operation lock
    KEYS[3] journal stream of the operation's shard
    KEYS[4] operation history list
    KEYS[5] active index of the operation's shard (recovery sweeper)
    KEYS[6] suppressed index of the operation's shard

    ARGV[1]  fence token of the caller
    ARGV[2]  outcome: sent | in_doubt | failed | dead | suppressed | released
    ARGV[3]  now (ms)
    ARGV[4]  retention in ms
    ARGV[5]  journal MINID
    ARGV[6]  provider name ('' when none)
    ARGV[7]  external id ('' when none)
    ARGV[8]  error code ('' when none)
    ARGV[9]  error message ('' when none)
    ARGV[10] number of history entries that follow ARGV[17] (JSON each)
    ARGV[11] message key
    ARGV[12] recipient
    ARGV[13] channel
    ARGV[14] reason ('' when none; why dead or suppressed)
    ARGV[15] status to return to on 'released' (pending | failed | in_doubt)
    ARGV[16] operation key
    ARGV[17] when the next attempt is due (ms; '' = now): the sweeper looks at
             the operation once this has passed and nobody touched it
    ARGV[18..] history entries (JSON), one per provider attempt

  Output:
    { "ok", journalId }         journalId is '' when the outcome is not journaled
    { "stale", currentFence }   a newer claim exists: nothing was written
]]
local opKey, lockKey, journalKey, historyKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local indexKey, suppressedKey = KEYS[5], KEYS[6]
local fence, outcome, now = ARGV[1], ARGV[2], ARGV[3]

local current = redis.call('HGET', opKey, 'fence')
if current ~= fence then
  return { 'stale', current or '0' }
end
-- A terminal state is never rewritten by a commit. This makes a commit that is
-- re-sent after a Redis restart (ioredis resends unanswered commands) a no-op
-- instead of a second journal entry.
local status0 = redis.call('HGET', opKey, 'status')
if status0 == 'sent' or status0 == 'dead' or status0 == 'suppressed' then
  return { 'ok', '' }
end
-- The lock may have expired without anyone claiming since (the fence is still
-- ours); then nobody else can have acted, and the commit stands. A lock holding
-- another token cannot exist while the fence matches, but never trust that.
local holder = redis.call('GET', lockKey)
if holder and holder ~= fence then
  return { 'stale', holder }
end

local status = outcome
if outcome == 'released' then status = ARGV[15] end
redis.call('HSET', opKey, 'status', status, 'updatedAt', now, 'owner', '')
if ARGV[6] ~= '' then redis.call('HSET', opKey, 'provider', ARGV[6]) end
if ARGV[7] ~= '' then redis.call('HSET', opKey, 'externalId', ARGV[7]) end
if ARGV[8] ~= '' then
  redis.call('HSET', opKey, 'lastErrorCode', ARGV[8], 'lastError', ARGV[9])
end
if ARGV[14] ~= '' then redis.call('HSET', opKey, 'reason', ARGV[14]) end
if outcome == 'sent' then redis.call('HSET', opKey, 'sentAt', now) end
redis.call('DEL', lockKey)
redis.call('PEXPIRE', opKey, ARGV[4])

local entries = tonumber(ARGV[10])
if entries > 0 then
  for i = 18, 17 + entries do redis.call('RPUSH', historyKey, ARGV[i]) end
  redis.call('LTRIM', historyKey, -200, -1)
  redis.call('PEXPIRE', historyKey, ARGV[4])
end

-- The sweeper index: one command per commit. Terminal states leave it; the rest
-- stay with their next check time, negated for in_doubt (see KeyBuilder.activeIndex).
if status == 'sent' or status == 'dead' or status == 'suppressed' then
  redis.call('ZREM', indexKey, ARGV[16])
else
  local due = tonumber(ARGV[17]) or tonumber(now)
  if status == 'in_doubt' then due = -due end
  redis.call('ZADD', indexKey, due, ARGV[16])
end
if status == 'suppressed' then redis.call('ZADD', suppressedKey, now, ARGV[16]) end

local journalId = ''
if outcome == 'sent' or outcome == 'in_doubt' or outcome == 'dead' or outcome == 'suppressed' then
  journalId = redis.call('XADD', journalKey, 'MINID', '~', ARGV[5], '*',
    'type', outcome, 'op', ARGV[16], 'msg', ARGV[11], 'recipient', ARGV[12],
    'channel', ARGV[13], 'provider', ARGV[6], 'extId', ARGV[7], 'fence', fence,
    'err', ARGV[8], 'reason', ARGV[14], 'ts', now)
  -- Remember where this operation's entries are, so `ops show` needs no stream scan.
  local ids = redis.call('HGET', opKey, 'journalIds')
  if ids then ids = ids .. ',' .. journalId else ids = journalId end
  redis.call('HSET', opKey, 'journalIds', ids)
end
return { 'ok', journalId }
