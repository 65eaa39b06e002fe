--[[
  Release a mutex only when the caller still owns it.

  Input:
    KEYS[1] mutex key
    ARGV[1] owner id

  Output:
    1 released, 0 not the owner (expired and taken by another, or never held)
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
