--[[
  Fenced commit of a render attempt: document state, journal entry and lock
  release in one step, rejected when a later claim superseded the caller.

  Input:
    KEYS[1] document state hash
    KEYS[2] document lock
    KEYS[3] journal stream of the document's shard

    ARGV[1] options (JSON, ScriptOptions['doc-commit'] in script-options.ts):
      fence         fence token of the caller
      outcome       stored | failed (retry later) | dead (failed for good)
      now           ms
      retentionMs   state expiry
      journalMinId  journal MINID
      documentKey   the document's key (journal)
      name          the document's name (journal)
      messageKey    the document's message (journal)
      checksum, size, storeKey, fileName, contentType   stored only
      errorCode, errorMessage                          failed and dead
      nextAttemptAt                                    failed only (ms)

  Output:
    { "ok", journalId }         journalId is '' for `failed` (retries are not journaled)
    { "stale", currentFence }   a newer claim exists: nothing was written
]]
local o = cjson.decode(ARGV[1])
local docKey, lockKey, journalKey = KEYS[1], KEYS[2], KEYS[3]
local fence, outcome, now = o.fence, o.outcome, o.now

local current = redis.call('HGET', docKey, 'fence')
if current ~= fence then return { 'stale', current or '0' } end
local status0 = redis.call('HGET', docKey, 'status')
if status0 == 'stored' or status0 == 'dead' then return { 'ok', '' } end
local holder = redis.call('GET', lockKey)
if holder and holder ~= fence then return { 'stale', holder } end

local journalId = ''
if outcome == 'stored' then
  redis.call('HSET', docKey, 'status', 'stored', 'checksum', o.checksum, 'size', o.size, 'storeKey', o.storeKey,
    'fileName', o.fileName, 'contentType', o.contentType, 'storedAt', now, 'updatedAt', now, 'owner', '')
  journalId = redis.call('XADD', journalKey, 'MINID', '~', o.journalMinId, '*',
    'type', 'document_stored', 'doc', o.documentKey, 'name', o.name, 'msg', o.messageKey,
    'checksum', o.checksum, 'size', o.size, 'storeKey', o.storeKey, 'ts', now)
elseif outcome == 'dead' then
  redis.call('HSET', docKey, 'status', 'dead', 'lastErrorCode', o.errorCode, 'lastError', o.errorMessage,
    'updatedAt', now, 'owner', '')
  journalId = redis.call('XADD', journalKey, 'MINID', '~', o.journalMinId, '*',
    'type', 'document_failed', 'doc', o.documentKey, 'name', o.name, 'msg', o.messageKey,
    'err', o.errorCode, 'error', o.errorMessage, 'ts', now)
else
  redis.call('HSET', docKey, 'status', 'failed', 'lastErrorCode', o.errorCode, 'lastError', o.errorMessage,
    'nextAttemptAt', o.nextAttemptAt, 'updatedAt', now, 'owner', '')
end
if journalId ~= '' then
  local ids = redis.call('HGET', docKey, 'journalIds')
  redis.call('HSET', docKey, 'journalIds', ids and (ids .. ',' .. journalId) or journalId)
end
redis.call('DEL', lockKey)
redis.call('PEXPIRE', docKey, o.retentionMs)
return { 'ok', journalId }
