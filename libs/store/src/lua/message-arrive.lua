--[[
  Record one arrival of a message (ingest dedup). Identity is the message key;
  every arrival is counted, the first one is remembered.

  Input:
    KEYS[1] message record hash

    ARGV[1] options (JSON, ScriptOptions['message-arrive'] in script-options.ts):
      now          ms
      via          the channel that brought it: api, mail-raw, imap, mailgun, …
      retentionMs  record expiry (at least this long past the last arrival; include/retain.lua)

  Output:
    { first (1|0), queued (1|0), firstArrivalAt, arrivals }

  It also keeps `at:<via>`, the first arrival through each channel (the story
  page's arrivals per channel), set with that channel's first arrival.

  One read and one write: the counters are computed here (the script is atomic,
  so this equals HSETNX + HINCRBY + HINCRBY + HSET, in fewer commands).
]]
--@include "include/retain.lua"
local key = KEYS[1]
local o = cjson.decode(ARGV[1])
local now = o.now
local viaField = 'via:' .. o.via
local h = redis.call('HMGET', key, 'firstArrivalAt', 'queuedAt', 'arrivals', viaField)
-- '%d': a Lua number handed to redis.call would cost a "%.17g" (script-options.ts).
local arrivals = string.format('%d', tonumber(h[3] or '0') + 1)
local viaCount = string.format('%d', tonumber(h[4] or '0') + 1)
local first, firstArrivalAt = 0, h[1]
if firstArrivalAt then
  redis.call('HSET', key, 'arrivals', arrivals, viaField, viaCount, 'lastArrivalAt', now)
  -- The first arrival through each channel, for the story of the message.
  if viaCount == '1' then redis.call('HSET', key, 'at:' .. o.via, now) end
else
  first, firstArrivalAt = 1, now
  redis.call('HSET', key, 'firstArrivalAt', now, 'firstVia', o.via, 'arrivals', arrivals, viaField, viaCount,
    'lastArrivalAt', now)
end
if first == 1 then retainNew(key, o.retentionMs) else retain(key, o.retentionMs) end
return { first, h[2] and 1 or 0, firstArrivalAt, arrivals }
