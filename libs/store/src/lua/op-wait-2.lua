--[[
  Marks an operation as waiting (for its document) or clears the mark, so the
  wait is visible: `ops show`, the waiting gauge, the dashboard. The mark is
  never an attempt: the attempt counter is not touched.

  Input:
    KEYS[1] operation state hash
    KEYS[2] waiting index of the operation's shard (sorted set, score = since)

    ARGV[1] mode: set | clear
    ARGV[2] operation key
    ARGV[3] now (ms)
    ARGV[4] what it waits for (e.g. `document:purchase-order`), set only
    ARGV[5] retention in ms (state expiry), set only
    ARGV[6] message key, set only
    ARGV[7] recipient, set only
    ARGV[8] channel, set only

  Output:
    1 when the mark changed, 0 otherwise (terminal operations are never marked)
]]
local opKey, indexKey = KEYS[1], KEYS[2]
if ARGV[1] == 'clear' then
  redis.call('HDEL', opKey, 'waitingFor', 'waitingSince')
  return redis.call('ZREM', indexKey, ARGV[2])
end
local status = redis.call('HGET', opKey, 'status')
if status == 'sent' or status == 'dead' or status == 'suppressed' then return 0 end
if redis.call('HGET', opKey, 'waitingFor') == ARGV[4] then return 0 end
redis.call('HSET', opKey, 'waitingFor', ARGV[4], 'waitingSince', ARGV[3], 'updatedAt', ARGV[3])
if not status then
  redis.call('HSET', opKey, 'status', 'pending', 'messageKey', ARGV[6], 'recipient', ARGV[7], 'channel', ARGV[8])
end
redis.call('PEXPIRE', opKey, ARGV[5])
redis.call('ZADD', indexKey, 'NX', ARGV[3], ARGV[2])
return 1
