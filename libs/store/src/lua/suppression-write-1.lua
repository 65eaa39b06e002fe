--[[
  Change a recipient's suppressions or opt-outs in their record (the one the
  admin API lists and the audit describes); the caller then writes the same
  change to the copy in every shard (suppression-copy-1.lua), which is what
  the claim reads.

  Input:
    KEYS[1] the recipient's suppression record hash

    ARGV[1] options (JSON, ScriptOptions['suppression-write-1'] in script-options.ts):
      mode     add | remove | preferences | opt-out
      field    with add and remove: `s|<channel>|<category or *>` or `p|…`
      value    with add: the entry (JSON: reason, origin, by, at, expiresAt)
      optOuts  with preferences: every `p|…` field the recipient opts out of now
               (with opt-out: the one `p|…` field added to those there are)
      detail   with preferences and opt-out: the value of each (JSON: by, at)

  Output:
    { changed (1|0), version, removedField1, ... }
    add: changed is 0 when the entry existed (the first one stands: a bounce
    reported three times is one suppression); remove: 0 when there was none;
    preferences: version is the new opt-out version, the removed fields follow;
    opt-out: changed is 0 when the recipient had opted out so already (the
    version is then unchanged): one step, so a concurrent PUT is never lost.
]]
local key = KEYS[1]
local o = cjson.decode(ARGV[1])
if o.mode == 'add' then
  local changed = redis.call('HSETNX', key, o.field, o.value)
  return { changed, redis.call('HGET', key, 'pv') or '0' }
end
if o.mode == 'remove' then
  return { redis.call('HDEL', key, o.field), redis.call('HGET', key, 'pv') or '0' }
end

if o.mode == 'opt-out' then
  local field = o.optOuts[1]
  if redis.call('HSETNX', key, field, o.detail) == 0 then return { 0, redis.call('HGET', key, 'pv') or '0' } end
  return { 1, tostring(redis.call('HINCRBY', key, 'pv', 1)) }
end

-- preferences: the whole set of opt-outs is replaced (PUT).
local wanted = {}
for _, f in ipairs(o.optOuts) do wanted[f] = true end
local out = { 1, '' }
local fields = redis.call('HKEYS', key)
for _, f in ipairs(fields) do
  if string.sub(f, 1, 2) == 'p|' and not wanted[f] then
    redis.call('HDEL', key, f)
    out[#out + 1] = f
  end
end
for _, f in ipairs(o.optOuts) do redis.call('HSET', key, f, o.detail) end
out[2] = tostring(redis.call('HINCRBY', key, 'pv', 1))
return out
