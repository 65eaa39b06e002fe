--[[
  Move an operation's next check time in the sweeper index, keeping the sign
  (negative = in_doubt, see KeyBuilder.activeIndex) and never re-adding an
  operation a commit removed meanwhile.

  Input:
    KEYS[1] active index of the operation's shard
    ARGV[1] options (JSON, ScriptOptions['index-touch'] in script-options.ts):
      operationKey
      dueAt         next check time (ms)

  Output:
    1 moved, 0 not in the index (terminal by now)
]]
local o = cjson.decode(ARGV[1])
local score = redis.call('ZSCORE', KEYS[1], o.operationKey)
if not score then return 0 end
local at = o.dueAt
if tonumber(score) < 0 then at = '-' .. at end
redis.call('ZADD', KEYS[1], at, o.operationKey)
return 1
