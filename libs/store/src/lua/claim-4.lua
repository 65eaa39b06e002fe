--[[
  Claim an operation before any provider call (docs/protocol.md, invariant 3).

  Input:
    KEYS[1] operation state hash
    KEYS[2] operation lock
    KEYS[3] journal stream of the operation's shard
    KEYS[4] active index of the operation's shard (recovery sweeper)

    ARGV[1] options (JSON, ClaimScriptOptions in script-options.ts):
      leaseMs       lease in ms
      now           ms since epoch
      owner         worker id, for operators
      operationKey, messageKey, recipient, channel
      retentionMs   state expiry
      journalMinId  entries older than this may be trimmed
    ARGV[2] the deliver job as JSON (optional); kept at the first claim so the
            sweeper can re-enqueue an operation whose job was lost

  Output:
    { "claimed", fence, previousStatus, attempts, lastProvider, externalId, limitBypass }
    { "duplicate", 0, "sent", attempts, provider, externalId, "" }   already sent
    { "terminal", 0, status, attempts, provider, "", "" }            dead or suppressed
    { "conflict", pttl, status, attempts, "", "", "" }               another holder has the lock
  limitBypass is "1" once a replay released the operation from a rate-limit suppression.
]]
--@include "include/terminal.lua"
--@include "include/journal.lua"
local opKey, lockKey, journalKey, indexKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local o = cjson.decode(ARGV[1])
local job = ARGV[2]
local leaseMs, now = o.leaseMs, o.now

local state = redis.call('HMGET', opKey, 'status', 'attempts', 'provider', 'externalId', 'limitBypass')
local status = state[1] or 'pending'
local attempts = tonumber(state[2] or '0')
local provider = state[3] or ''
local externalId = state[4] or ''

if status == 'sent' then
  journalAdd(journalKey, o.journalMinId, { type = 'duplicate', op = o.operationKey, msg = o.messageKey,
    provider = provider, extId = externalId, ts = now })
  return { 'duplicate', 0, status, attempts, provider, externalId, '' }
end
if isTerminal(status) then
  return { 'terminal', 0, status, attempts, provider, '', '' }
end

local pttl = redis.call('PTTL', lockKey)
if pttl ~= -2 then
  -- -1 (no expiry) cannot happen through our scripts; treat it as held, never steal it.
  return { 'conflict', pttl, status, attempts, '', '', '' }
end

local fence = redis.call('HINCRBY', opKey, 'fence', 1)
redis.call('SET', lockKey, fence, 'PX', leaseMs)
attempts = redis.call('HINCRBY', opKey, 'attempts', 1)
redis.call('HSET', opKey, 'status', 'sending', 'owner', o.owner, 'claimedAt', now,
  'leaseUntil', now + leaseMs, 'updatedAt', now)
-- No longer waiting (mark-waiting-1.lua): it is being attempted.
redis.call('HDEL', opKey, 'waitingReason', 'waitingUntil')
if redis.call('HSETNX', opKey, 'createdAt', now) == 1 then
  redis.call('HSET', opKey, 'messageKey', o.messageKey, 'recipient', o.recipient, 'channel', o.channel)
  if job and job ~= '' then redis.call('HSET', opKey, 'job', job) end
end
redis.call('PEXPIRE', opKey, o.retentionMs)
-- Due for a look by the sweeper once the lease ran out (the one extra command per claim).
redis.call('ZADD', indexKey, now + leaseMs, o.operationKey)
return { 'claimed', fence, status, attempts, provider, externalId, state[5] or '' }
