--[[
  Fenced commit of a render attempt: document state, journal entry and lock
  release in one step, rejected when a later claim superseded the caller.

  Input:
    KEYS[1] document state hash
    KEYS[2] document lock
    KEYS[3] journal stream of the document's shard

    ARGV[1]  fence token of the caller
    ARGV[2]  outcome: stored | failed (retry later) | dead (failed for good)
    ARGV[3]  now (ms)
    ARGV[4]  retention in ms
    ARGV[5]  journal MINID
    ARGV[6]  document key
    ARGV[7]  checksum (sha256 hex of the bytes; stored only)
    ARGV[8]  size in bytes (stored only)
    ARGV[9]  store key (stored only)
    ARGV[10] file name (stored only)
    ARGV[11] content type (stored only)
    ARGV[12] error code ('' when none)
    ARGV[13] error message ('' when none)
    ARGV[14] when the next attempt is due (failed only)
    ARGV[15] document name (for the journal)
    ARGV[16] message key (for the journal)

  Output:
    { "ok", journalId }         journalId is '' for `failed` (retries are not journaled)
    { "stale", currentFence }   a newer claim exists: nothing was written
]]
local docKey, lockKey, journalKey = KEYS[1], KEYS[2], KEYS[3]
local fence, outcome, now = ARGV[1], ARGV[2], ARGV[3]

local current = redis.call('HGET', docKey, 'fence')
if current ~= fence then return { 'stale', current or '0' } end
local status0 = redis.call('HGET', docKey, 'status')
if status0 == 'stored' or status0 == 'dead' then return { 'ok', '' } end
local holder = redis.call('GET', lockKey)
if holder and holder ~= fence then return { 'stale', holder } end

local journalId = ''
if outcome == 'stored' then
  redis.call('HSET', docKey, 'status', 'stored', 'checksum', ARGV[7], 'size', ARGV[8], 'storeKey', ARGV[9],
    'fileName', ARGV[10], 'contentType', ARGV[11], 'storedAt', now, 'updatedAt', now, 'owner', '')
  journalId = redis.call('XADD', journalKey, 'MINID', '~', ARGV[5], '*',
    'type', 'document_stored', 'doc', ARGV[6], 'name', ARGV[15], 'msg', ARGV[16],
    'checksum', ARGV[7], 'size', ARGV[8], 'storeKey', ARGV[9], 'ts', now)
elseif outcome == 'dead' then
  redis.call('HSET', docKey, 'status', 'dead', 'lastErrorCode', ARGV[12], 'lastError', ARGV[13],
    'updatedAt', now, 'owner', '')
  journalId = redis.call('XADD', journalKey, 'MINID', '~', ARGV[5], '*',
    'type', 'document_failed', 'doc', ARGV[6], 'name', ARGV[15], 'msg', ARGV[16],
    'errorCode', ARGV[12], 'error', ARGV[13], 'ts', now)
else
  redis.call('HSET', docKey, 'status', 'failed', 'lastErrorCode', ARGV[12], 'lastError', ARGV[13],
    'nextAttemptAt', ARGV[14], 'updatedAt', now, 'owner', '')
end
if journalId ~= '' then
  local ids = redis.call('HGET', docKey, 'journalIds')
  redis.call('HSET', docKey, 'journalIds', ids and (ids .. ',' .. journalId) or journalId)
end
redis.call('DEL', lockKey)
redis.call('PEXPIRE', docKey, ARGV[4])
return { 'ok', journalId }
