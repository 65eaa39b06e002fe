--[[
  Extend the lease of a held lock, only after comparing the fence token
  (docs/protocol.md, invariant 10).

  Input:
    KEYS[1] operation lock
    KEYS[2] operation state hash

    ARGV[1] options (JSON, ScriptOptions['extend-lock'] in script-options.ts):
      fence       fence token of the caller (a string)
      leaseMs     lease in ms
      leaseUntil  now + leaseMs (ms)

  Output:
    1  extended (or re-taken: the lock had expired but no later claim exists)
    0  lost: a later claim owns the operation; stop and do not commit
]]
local o = cjson.decode(ARGV[1])
local holder = redis.call('GET', KEYS[1])
if holder == o.fence then
  redis.call('PEXPIRE', KEYS[1], o.leaseMs)
elseif holder == false and redis.call('HGET', KEYS[2], 'fence') == o.fence
    and redis.call('HGET', KEYS[2], 'status') == 'sending' then
  redis.call('SET', KEYS[1], o.fence, 'PX', o.leaseMs)
else
  return 0
end
redis.call('HSET', KEYS[2], 'leaseUntil', o.leaseUntil)
return 1
