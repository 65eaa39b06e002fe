--[[
  Extend the lease of a held lock, only after comparing the fence token
  (DESIGN.md invariant 10).

  Input:
    KEYS[1] operation lock
    KEYS[2] operation state hash

    ARGV[1] fence token of the caller
    ARGV[2] lease in ms
    ARGV[3] now (ms)

  Output:
    1  extended (or re-taken: the lock had expired but no later claim exists)
    0  lost: a later claim owns the operation; stop and do not commit
]]
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
elseif holder == false and redis.call('HGET', KEYS[2], 'fence') == ARGV[1]
    and redis.call('HGET', KEYS[2], 'status') == 'sending' then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  return 0
end
redis.call('HSET', KEYS[2], 'leaseUntil', tonumber(ARGV[3]) + tonumber(ARGV[2]))
return 1
