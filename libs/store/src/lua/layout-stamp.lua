--[[
  Read the layout version a shard's keys were written for, stamping ours on a
  shard that holds none yet. Never lowers or raises a version that is there:
  moving from one layout to the next is a numbered migration, not a start-up
  side effect.

  Input:
    KEYS[1] the shard's layout key
    ARGV[1] options (JSON, ScriptOptions['layout-stamp'] in script-options.ts):
      version  the layout version of the calling process

  Output:
    the version the shard holds after the call (text)
]]
local o = cjson.decode(ARGV[1])
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], o.version)
return o.version
