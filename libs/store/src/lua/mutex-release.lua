--[[
  Release a mutex only when the caller still owns it.

  Input:
    KEYS[1] mutex key
    ARGV[1] options (JSON, ScriptOptions['mutex-release'] in script-options.ts):
      owner  owner id

  Output:
    1 released, 0 not the owner (expired and taken by another, or never held)
]]
local o = cjson.decode(ARGV[1])
if redis.call('GET', KEYS[1]) == o.owner then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
