--[[
  Replay a dead or suppressed operation: back to `pending` under the same
  operation key (docs/protocol.md, invariant 7), with a `replayed` journal entry
  that says who asked and how. The claim on the operation key is what keeps a
  replay from sending twice; this script only refuses what must not be replayed.

  Input:
    KEYS[1] operation state hash
    KEYS[2] journal stream of the operation's shard
    KEYS[3] operation history list
    KEYS[4] active index of the operation's shard (recovery sweeper)
    KEYS[5] suppressed index of the operation's shard
    KEYS[6] operation data hash (large values: the stored deliver job)
    KEYS[7] layout version of the operation's shard (include/layout.lua)

    ARGV[1] options (JSON, ScriptOptions['replay'] in script-options.ts):
      now           ms
      by            who asked: a user name, an API client
      via           cli | api | dashboard | …
      retentionMs   state and history expiry
      journalMinId  journal MINID
      operationKey
    ARGV[2] the deliver job as JSON (optional); kept when the state has none

  Output:
    { "upgrade_required", held }  the shard holds another layout (include/layout.lua): nothing done
    { "replayed", journalId, fromStatus, replays }
    { "already_sent", provider, externalId }   nothing changed, nothing will be sent
    { "not_replayable", status }              still in progress (pending, sending, failed, in_doubt), or cancelled
    { "not_found" }                           no state (never claimed, or past retention)
]]
--@include "include/layout.lua"
--@include "include/terminal.lua"
--@include "include/journal.lua"
local refusedBy = layoutRefusal(KEYS[7])
if refusedBy then return { 'upgrade_required', refusedBy } end
local opKey, journalKey, historyKey, indexKey, suppressedKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local dataKey = KEYS[6]
local o = cjson.decode(ARGV[1])
local job = ARGV[2]
local now, by, via, op = o.now, o.by, o.via, o.operationKey

local h = redis.call('HMGET', opKey, 'status', 'provider', 'externalId', 'reason', 'fence',
  'messageKey', 'recipient', 'channel', 'replays', 'journalIds', 'limitBypass')
local status = h[1]
if not status then return { 'not_found' } end
if status == 'sent' then return { 'already_sent', h[2] or '', h[3] or '' } end
-- The terminal statuses other than sent are the replayable ones, except a
-- cancelled operation: the producer took it back, and no operator resends it.
if not isTerminal(status) or status == 'cancelled' then return { 'not_replayable', status } end

local journalId = journalAdd(journalKey, o.journalMinId, {
  type = 'replayed', op = op, msg = h[6] or '', recipient = h[7] or '', channel = h[8] or '',
  by = by, via = via, from = status, reason = h[4] or '', ts = now })

-- A fresh attempt budget; the fence keeps counting, so a holder from before the
-- replay can never commit over it.
local replays = string.format('%d', tonumber(h[9] or '0') + 1)
local fields = { 'status', 'pending', 'attempts', '0', 'reason', '', 'owner', '', 'updatedAt', now, 'replayedAt', now,
  'replayedBy', by, 'replayedVia', via, 'replays', replays,
  'journalIds', h[10] and (h[10] .. ',' .. journalId) or journalId }
if status == 'suppressed' then
  -- An operator released it on purpose: the next claim skips the rate limit once
  -- (the send still counts in the window).
  fields[#fields + 1] = 'limitBypass'
  fields[#fields + 1] = '1'
  redis.call('ZREM', suppressedKey, op)
elseif h[11] then
  redis.call('HDEL', opKey, 'limitBypass')
end
redis.call('HSET', opKey, unpack(fields))
redis.call('PEXPIRE', opKey, o.retentionMs)
if job and job ~= '' then redis.call('HSETNX', dataKey, 'job', job) end
redis.call('PEXPIRE', dataKey, o.retentionMs)

redis.call('RPUSH', historyKey, cjson.encode({
  at = now, attempt = 0, fence = h[5] or '0', outcome = 'replayed', step = 'replay',
  by = by, via = via, note = 'replayed from ' .. status .. ((h[4] and h[4] ~= '') and (' (' .. h[4] .. ')') or '')
}))
redis.call('LTRIM', historyKey, -200, -1)
redis.call('PEXPIRE', historyKey, o.retentionMs)

-- Due at once: if the deliver job never makes it into the queue, the sweeper re-adds it.
redis.call('ZADD', indexKey, now, op)
return { 'replayed', journalId, status, replays }
