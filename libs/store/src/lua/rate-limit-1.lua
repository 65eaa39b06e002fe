--[[
  Per-recipient sliding window (the anti-spam safety net): at most `max`
  operations per `window`. Members are operation keys, so an operation that is
  retried, reclaimed or replayed is counted once, however often it asks.

  Input:
    KEYS[1] window of one scope and recipient (sorted set: operation key → time)

    ARGV[1] now (ms)
    ARGV[2] window in ms
    ARGV[3] max
    ARGV[4] operation key
    ARGV[5] "1": count it whatever the window holds (a replay that bypasses the limit)

  Output:
    { 1, count, "counted" }    already in the window
    { 1, count, "added" }      added (count includes it)
    { 0, count, oldestAt }     over the limit; a slot frees at oldestAt + window
]]
local key, now, windowMs = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowMs)
if redis.call('ZSCORE', key, ARGV[4]) then
  return { 1, redis.call('ZCARD', key), 'counted' }
end
local count = redis.call('ZCARD', key)
if ARGV[5] == '1' or count < tonumber(ARGV[3]) then
  redis.call('ZADD', key, now, ARGV[4])
  redis.call('PEXPIRE', key, windowMs)
  return { 1, count + 1, 'added' }
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return { 0, count, oldest[2] or tostring(now) }
