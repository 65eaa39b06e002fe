--[[
  Record one arrival of a message (ingest dedup). Identity is the message key;
  every arrival is counted, the first one is remembered.

  Input:
    KEYS[1] message record hash

    ARGV[1] now (ms)
    ARGV[2] via (the channel that brought it: api, mail-raw, imap, mailgun, …)
    ARGV[3] retention in ms

  Output:
    { first (1|0), queued (1|0), firstArrivalAt, arrivals }
]]
local key = KEYS[1]
local first = redis.call('HSETNX', key, 'firstArrivalAt', ARGV[1])
if first == 1 then
  redis.call('HSET', key, 'firstVia', ARGV[2])
end
local arrivals = redis.call('HINCRBY', key, 'arrivals', 1)
redis.call('HINCRBY', key, 'via:' .. ARGV[2], 1)
redis.call('HSET', key, 'lastArrivalAt', ARGV[1])
redis.call('PEXPIRE', key, ARGV[3])
local state = redis.call('HMGET', key, 'queuedAt', 'firstArrivalAt')
local queued = 0
if state[1] then queued = 1 end
return { first, queued, state[2], arrivals }
