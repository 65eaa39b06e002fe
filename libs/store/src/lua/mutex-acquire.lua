--[[
  Take or keep a lease-style mutex (one recovery sweeper across processes).

  Input:
    KEYS[1] mutex key
    ARGV[1] options (JSON, ScriptOptions['mutex-acquire'] in script-options.ts):
      owner    owner id
      leaseMs  lease in ms

  Output:
    1  the caller holds it (taken now, or renewed)
    0  another owner holds it
]]
local o = cjson.decode(ARGV[1])
if redis.call('GET', KEYS[1]) == o.owner then
  redis.call('PEXPIRE', KEYS[1], o.leaseMs)
  return 1
end
if redis.call('SET', KEYS[1], o.owner, 'NX', 'PX', o.leaseMs) then return 1 end
return 0
