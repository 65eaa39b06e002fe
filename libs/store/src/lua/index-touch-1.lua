--[[
  Move an operation's next check time in the sweeper index, keeping the sign
  (negative = in_doubt, see KeyBuilder.activeIndex) and never re-adding an
  operation a commit removed meanwhile.

  Input:
    KEYS[1] active index of the operation's shard
    ARGV[1] operation key
    ARGV[2] next check time (ms)

  Output:
    1 moved, 0 not in the index (terminal by now)
]]
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return 0 end
local at = tonumber(ARGV[2])
if tonumber(score) < 0 then at = -at end
redis.call('ZADD', KEYS[1], at, ARGV[1])
return 1
