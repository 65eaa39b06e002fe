--[[
  Record one arrival of a message (ingest dedup). Identity is the message key;
  every arrival is counted, the first one is remembered.

  Input:
    KEYS[1] message record hash

    ARGV[1] options (JSON, MessageArriveScriptOptions in script-options.ts):
      now          ms
      via          the channel that brought it: api, mail-raw, imap, mailgun, …
      retentionMs  record expiry

  Output:
    { first (1|0), queued (1|0), firstArrivalAt, arrivals }
]]
local key = KEYS[1]
local o = cjson.decode(ARGV[1])
local first = redis.call('HSETNX', key, 'firstArrivalAt', o.now)
if first == 1 then
  redis.call('HSET', key, 'firstVia', o.via)
end
local arrivals = redis.call('HINCRBY', key, 'arrivals', 1)
redis.call('HINCRBY', key, 'via:' .. o.via, 1)
redis.call('HSET', key, 'lastArrivalAt', o.now)
redis.call('PEXPIRE', key, o.retentionMs)
local state = redis.call('HMGET', key, 'queuedAt', 'firstArrivalAt')
local queued = 0
if state[1] then queued = 1 end
return { first, queued, state[2], arrivals }
