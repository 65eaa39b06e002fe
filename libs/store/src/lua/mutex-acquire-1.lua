--[[
  Take or keep a lease-style mutex (one recovery sweeper across processes).

  Input:
    KEYS[1] mutex key
    ARGV[1] owner id
    ARGV[2] lease in ms

  Output:
    1  the caller holds it (taken now, or renewed)
    0  another owner holds it
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
