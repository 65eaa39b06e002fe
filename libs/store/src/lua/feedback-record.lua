--[[
  Record one provider feedback event (delivered, bounced, …) of an operation,
  once per provider event id, in order of arrival (docs/feedback.md). The
  summary status only moves up in rank (a bounce after `delivered` becomes the
  summary; a late `deferred` after `delivered` is kept but leaves it), and every
  event is kept, none refused for coming "too late".

  Input:
    KEYS[1] operation state hash (read only: it must exist, and gives the journal its fields)
    KEYS[2] feedback hash of the operation (KeyBuilder.feedback)
    KEYS[3] journal stream of the operation's shard
    ARGV[1] options (JSON, ScriptOptions['feedback-record'] in script-options.ts):
      operationKey  the operation (for its journal entry)
      eventId       the provider's own id of this event (dedup)
      source        the feedback endpoint (ses, sendgrid, postmark, mailgun, twilio)
      type          delivered | deferred | bounced | complained | dropped | failed | unsubscribed | accepted
      rank          the type's rank (FEEDBACK_RANK in libs/core); the summary is the highest seen
      hard          '1' for a hard bounce (or a failure that will not change), else '0'
      now           ms
      retentionMs   the record's expiry (include/retain.lua)
      journalMinId  journal trim bound
    ARGV[2] the event as JSON (stored as it is, with its sequence number)

  Output:
    { 'recorded' | 'duplicate' | 'unmatched', summary status or '', the operation's provider or '', seq or '0',
      the operation's channel or '', its recipient or '', the stored event of this id (JSON) for a duplicate, else '' }
    `unmatched`: no such operation (expired, or never ours); nothing is written.
    A duplicate answers with the event recorded first under its id: what the
    caller acts on is what was recorded, not what the repeat says.
]]
--@include "include/retain.lua"
--@include "include/journal.lua"
local opKey, fbKey, journalKey = KEYS[1], KEYS[2], KEYS[3]
local o = cjson.decode(ARGV[1])
local state = redis.call('HMGET', opKey, 'messageKey', 'recipient', 'channel', 'provider', 'status')
if not state[5] then return { 'unmatched', '', '', '0', '', '', '' } end
local provider, channel, recipient = state[4] or '', state[3] or '', state[2] or ''

local seenField = 'seen:' .. o.eventId
local summary = redis.call('HMGET', fbKey, seenField, 'status', 'rank')
if summary[1] then
  return { 'duplicate', summary[2] or '', provider, summary[1], channel, recipient, redis.call('HGET', fbKey, 'ev:' .. summary[1]) or '' }
end

local seq = string.format('%d', redis.call('HINCRBY', fbKey, 'count', 1))
local status, rank = summary[2], tonumber(summary[3] or '-1')
if tonumber(o.rank) > rank then
  status = o.type
  redis.call('HSET', fbKey, 'status', status, 'rank', o.rank, 'hard', o.hard)
end
local journalId = journalAdd(journalKey, o.journalMinId, {
  type = 'feedback', op = o.operationKey, msg = state[1], recipient = state[2], channel = state[3],
  provider = o.source, extId = o.eventId, reason = o.type, ts = o.now,
})
redis.call('HSET', fbKey, seenField, seq, 'ev:' .. seq, ARGV[2], 'jid:' .. seq, journalId, 'updatedAt', o.now)
retain(fbKey, o.retentionMs)
return { 'recorded', status or '', provider, seq, channel, recipient, '' }
