--[[
  Claim a document's render operation before generating it: the document's own
  lock and fence, the same protocol as claim.lua for deliveries.

  Input:
    KEYS[1] document state hash
    KEYS[2] document lock
    KEYS[3] journal stream of the document's shard (unused here; same slot as the commit)

    ARGV[1] options (JSON, ScriptOptions['doc-claim'] in script-options.ts):
      leaseMs      lease in ms
      now          ms
      leaseUntil   now + leaseMs
      owner        worker id, for operators
      retentionMs  state expiry
      messageKey   the document's message
    ARGV[2] the render job as JSON: kept at the first claim so a replay can render again

  Output:
    { "claimed", fence, attempts, previousStatus }
    { "stored", checksum, storeKey, size, fileName, contentType }   already generated
    { "dead", attempts, errorCode, error }                          failed for good (replay to retry)
    { "conflict", pttl }                                            another renderer holds the lock
]]
local o = cjson.decode(ARGV[1])
local docKey, lockKey = KEYS[1], KEYS[2]
local leaseMs, now = o.leaseMs, o.now

local h = redis.call('HMGET', docKey, 'status', 'attempts', 'checksum', 'storeKey', 'size', 'fileName',
  'contentType', 'lastErrorCode', 'lastError')
local status = h[1] or 'pending'
if status == 'stored' then
  return { 'stored', h[3] or '', h[4] or '', h[5] or '0', h[6] or '', h[7] or '' }
end
if status == 'dead' then
  return { 'dead', h[2] or '0', h[8] or '', h[9] or '' }
end
local pttl = redis.call('PTTL', lockKey)
if pttl ~= -2 then
  return { 'conflict', pttl }
end
local fence = redis.call('HINCRBY', docKey, 'fence', 1)
redis.call('SET', lockKey, fence, 'PX', leaseMs)
local attempts = redis.call('HINCRBY', docKey, 'attempts', 1)
redis.call('HSET', docKey, 'status', 'rendering', 'owner', o.owner, 'claimedAt', now,
  'leaseUntil', o.leaseUntil, 'updatedAt', now)
if redis.call('HSETNX', docKey, 'createdAt', now) == 1 then
  redis.call('HSET', docKey, 'job', ARGV[2], 'messageKey', o.messageKey)
end
redis.call('PEXPIRE', docKey, o.retentionMs)
return { 'claimed', fence, attempts, status }
