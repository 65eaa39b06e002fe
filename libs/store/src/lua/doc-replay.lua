--[[
  Replay a document that failed for good: back to `pending` with a fresh
  attempt budget, once. Replaying its ten dependent operations runs this ten
  times; only the first finds it dead, so the document is generated once.

  Input:
    KEYS[1] document state hash
    KEYS[2] journal stream of the document's shard

    ARGV[1] options (JSON, ScriptOptions['doc-replay'] in script-options.ts):
      now           ms
      by            who asked
      journalMinId  journal MINID
      documentKey   the document's key (journal)

  Output:
    { "replayed", job, replays }   the caller re-adds the render job (its JSON); replays numbers its job id
    { "not_dead", status }     stored, pending or rendering: nothing to do
    { "not_found" }
]]
local o = cjson.decode(ARGV[1])
local docKey, journalKey = KEYS[1], KEYS[2]
local h = redis.call('HMGET', docKey, 'status', 'job', 'messageKey')
if not h[1] then return { 'not_found' } end
if h[1] ~= 'dead' then return { 'not_dead', h[1] } end
redis.call('HSET', docKey, 'status', 'pending', 'attempts', 0, 'lastErrorCode', '', 'lastError', '',
  'updatedAt', o.now, 'replayedAt', o.now, 'replayedBy', o.by)
local replays = redis.call('HINCRBY', docKey, 'replays', 1)
local id = redis.call('XADD', journalKey, 'MINID', '~', o.journalMinId, '*',
  'type', 'document_replayed', 'doc', o.documentKey, 'msg', h[3] or '', 'by', o.by, 'ts', o.now)
local ids = redis.call('HGET', docKey, 'journalIds')
redis.call('HSET', docKey, 'journalIds', ids and (ids .. ',' .. id) or id)
return { 'replayed', h[2] or '', replays }
