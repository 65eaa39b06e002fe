--[[
  Read the layout version a shard's keys were written for, and write another
  only where the caller expects what is there: a shard that holds none yet gets
  the caller's version; a numbered migration (migrations.ts) moves a shard from
  the version it read to `migrating:<n>` and, once its data is rewritten, to
  `<n>`. Never a blind write: a process of another version stamping or
  migrating at the same moment is read, never overwritten.

  Input:
    KEYS[1] the shard's layout key
    ARGV[1] options (JSON, ScriptOptions['layout-stamp'] in script-options.ts):
      version  what to write: the caller's layout version, or `migrating:<n>`
      expect   what the shard must hold for the write ('' for none: a new shard)

  Output:
    the version the shard holds after the call (text; '' for none)
]]
local o = cjson.decode(ARGV[1])
local held = redis.call('GET', KEYS[1])
if (held or '') ~= o.expect then return held or '' end
redis.call('SET', KEYS[1], o.version)
return o.version
