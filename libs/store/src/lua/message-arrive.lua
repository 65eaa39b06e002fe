--[[
  Record one arrival of a message (ingest dedup). Identity is the message key;
  every arrival is counted, the first one is remembered. One call records one
  or more arrivals (those ingest accepted in one turn), each as if in a call
  of its own.

  Input, for the i-th arrival: KEYS[i] is its KEYS[1] below, and its ARGV
  follow the arrivals before it (runEach in scripts.ts):
    KEYS[1] message record hash

    options (JSON, ScriptOptions['message-arrive'] in script-options.ts):
      now          ms
      via          the channel that brought it: api, mail-raw, imap, mailgun, …
      retentionMs  record expiry (at least this long past the last arrival; include/retain.lua)
      tenant       the tenant of the producer key that posted it, kept with the first arrival
                   (absent for the default tenant: such a record is as it always was)

    the number of documents that follow (0)

  Output: a list with one answer per arrival, in their order:
    { "script_error", message }   a key of this item has the wrong type (include/each.lua): what it wrote
                                  before stays; any other error fails the whole call
    { first (1|0), queued (1|0), firstArrivalAt, arrivals }

  It also keeps `at:<via>`, the first arrival through each channel (the story
  page's arrivals per channel), set with that channel's first arrival.

  One read and one write: the counters are computed here (the script is atomic,
  so this equals HSETNX + HINCRBY + HINCRBY + HSET, in fewer commands).
]]
--@include "include/retain.lua"
--@include "include/each.lua"
-- One arrival: K[1] is its message record, o its options.
local function arriveOne(K, o)
  local key = K[1]
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
    -- Only another tenant than the default writes it: a deployment without tenants writes what it always did.
    if o.tenant then redis.call('HSET', key, 'tenant', o.tenant) end
  end
  if first == 1 then retainNew(key, o.retentionMs) else retain(key, o.retentionMs) end
  return { first, h[2] and 1 or 0, firstArrivalAt, arrivals }
end

-- In the order given: copies of one message in one call answer as calls one
-- after the other would (the first is the first arrival, the rest count).
return eachItem(1, arriveOne)
