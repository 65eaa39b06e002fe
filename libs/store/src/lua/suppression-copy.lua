--[[
  Write a change of a recipient's suppressions or opt-outs to the copy in one
  shard (the copy the claim reads, claim.lua). A change of opt-outs carries
  its version: an older one that arrives after a newer one changes nothing,
  so two changes racing over the shards leave every copy at the newer.

  Input:
    KEYS[1] the recipient's suppression copy in one shard

    ARGV[1] options (JSON, ScriptOptions['suppression-copy'] in script-options.ts):
      set      [field, expiry, field, expiry, ...] (expiry in ms, '' for none)
      remove   [field, ...]
      version  with opt-outs: their version

  Output:
    1 when written, 0 when a newer version was there
]]
local key = KEYS[1]
local o = cjson.decode(ARGV[1])
if o.version then
  local stored = tonumber(redis.call('HGET', key, 'pv') or '0')
  if stored >= tonumber(o.version) then return 0 end
  redis.call('HSET', key, 'pv', o.version)
end
if #o.remove > 0 then redis.call('HDEL', key, unpack(o.remove)) end
if #o.set > 0 then redis.call('HSET', key, unpack(o.set)) end
return 1
