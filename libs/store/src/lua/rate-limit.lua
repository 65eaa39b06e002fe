--[[
  Per-recipient sliding window (the anti-spam safety net): at most `max`
  operations per `window`. Members are operation keys, so an operation that is
  retried, reclaimed or replayed is counted once, however often it asks.

  Input:
    KEYS[1] window of one scope and recipient (sorted set: operation key → time)

    ARGV[1] options (JSON, ScriptOptions['rate-limit'] in script-options.ts):
      now           ms
      windowStart   now - windowMs: entries at or before it have left the window
      windowMs      window in ms
      max
      operationKey
      force         true: count it whatever the window holds (a replay that bypasses the limit)

  Output:
    { 1, count, "counted" }    already in the window
    { 1, count, "added" }      added (count includes it)
    { 0, count, oldestAt }     over the limit; a slot frees at oldestAt + window
]]
local key = KEYS[1]
local o = cjson.decode(ARGV[1])
local now, windowMs = o.now, o.windowMs
redis.call('ZREMRANGEBYSCORE', key, '-inf', o.windowStart)
if redis.call('ZSCORE', key, o.operationKey) then
  return { 1, redis.call('ZCARD', key), 'counted' }
end
local count = redis.call('ZCARD', key)
if o.force == true or count < o.max then
  redis.call('ZADD', key, now, o.operationKey)
  redis.call('PEXPIRE', key, windowMs)
  return { 1, count + 1, 'added' }
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return { 0, count, oldest[2] or now }
