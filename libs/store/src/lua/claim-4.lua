--[[
  Claim an operation before any provider call (DESIGN.md invariant 3).

  Input:
    KEYS[1] operation state hash
    KEYS[2] operation lock
    KEYS[3] journal stream of the operation's shard
    KEYS[4] active index of the operation's shard (recovery sweeper)

    ARGV[1] lease in ms
    ARGV[2] now (ms since epoch)
    ARGV[3] owner (worker id, for operators)
    ARGV[4] message key
    ARGV[5] recipient
    ARGV[6] channel
    ARGV[7] retention in ms (state expiry)
    ARGV[8] journal MINID (entries older than this may be trimmed)
    ARGV[9] journal the duplicate? "1" or "0"
    ARGV[10] operation key
    ARGV[11] the deliver job as JSON ('' when not given); kept at the first
             claim so the sweeper can re-enqueue an operation whose job was lost

  Output:
    { "claimed", fence, previousStatus, attempts, lastProvider, externalId, limitBypass }
    { "duplicate", 0, "sent", attempts, provider, externalId, "" }   already sent
    { "terminal", 0, status, attempts, provider, "", "" }            dead or suppressed
    { "conflict", pttl, status, attempts, "", "", "" }               another holder has the lock
  limitBypass is "1" once a replay released the operation from a rate-limit suppression.
]]
local opKey, lockKey, journalKey, indexKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local leaseMs, now = tonumber(ARGV[1]), ARGV[2]

local state = redis.call('HMGET', opKey, 'status', 'attempts', 'provider', 'externalId', 'limitBypass')
local status = state[1] or 'pending'
local attempts = tonumber(state[2] or '0')
local provider = state[3] or ''
local externalId = state[4] or ''

if status == 'sent' then
  if ARGV[9] == '1' then
    redis.call('XADD', journalKey, 'MINID', '~', ARGV[8], '*',
      'type', 'duplicate', 'op', ARGV[10], 'msg', ARGV[4], 'provider', provider,
      'extId', externalId, 'ts', now)
  end
  return { 'duplicate', 0, status, attempts, provider, externalId, '' }
end
if status == 'dead' or status == 'suppressed' then
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
redis.call('HSET', opKey, 'status', 'sending', 'owner', ARGV[3], 'claimedAt', now,
  'leaseUntil', tonumber(now) + leaseMs, 'updatedAt', now)
if redis.call('HSETNX', opKey, 'createdAt', now) == 1 then
  if ARGV[11] ~= '' then
    redis.call('HSET', opKey, 'messageKey', ARGV[4], 'recipient', ARGV[5], 'channel', ARGV[6], 'job', ARGV[11])
  else
    redis.call('HSET', opKey, 'messageKey', ARGV[4], 'recipient', ARGV[5], 'channel', ARGV[6])
  end
end
redis.call('PEXPIRE', opKey, ARGV[7])
-- Due for a look by the sweeper once the lease ran out (the one extra command per claim).
redis.call('ZADD', indexKey, tonumber(now) + leaseMs, ARGV[10])
return { 'claimed', fence, status, attempts, provider, externalId, state[5] or '' }
