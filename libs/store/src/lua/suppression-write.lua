--[[
  Change a recipient's suppressions or opt-outs in their record (the one the
  admin API lists and the audit describes), and keep the recipient's place on
  the list of their shard in the same step; the caller then writes the same
  change to the copy in every shard (suppression-copy.lua), which is what
  the claim reads.

  Input:
    KEYS[1] the recipient's suppression record hash
    KEYS[2] the suppression list index of the record's shard (recipients by when they went onto the list)
    KEYS[3] the expiry index of the same shard (recipients whose every entry expires, by when the last one does)

    ARGV[1] options (JSON, ScriptOptions['suppression-write'] in script-options.ts):
      mode      add | remove | preferences | opt-out
      now       ms since the epoch: what has expired, and when a recipient goes onto the list
      recipient the index member
      field     with add and remove: `s|<channel>|<category or *>` or `p|…`
      value     with add: the entry (JSON: reason, origin, by, at, expiresAt)
      optOuts   with preferences: every `p|…` field the recipient opts out of now
                (with opt-out: the one `p|…` field added to those there are)
      detail    with preferences and opt-out: the value of each (JSON: by, at)

  Output:
    { changed (1|0), version, removedField1, ... }
    add: changed is 0 when the entry exists and still holds (the first one
    stands: a bounce reported three times is one suppression); an expired one
    is replaced; a third value is the expiry of the entry that stands ('' for
    none), the one the copies get, so they enforce what the record says;
    remove: 0 when there was none;
    preferences: version is the new opt-out version, the removed fields follow;
    opt-out: changed is 0 when the recipient had opted out so already (the
    version is then unchanged): one step, so a concurrent PUT is never lost.

  The index: a recipient with an opt-out or a suppression that holds is on it
  (ZADD NX: the score stays while they stay on), one with nothing left leaves
  it, and one whose every entry had expired before this change leaves it
  first, so coming back puts them at the top again.
]]
local key, index, expiry = KEYS[1], KEYS[2], KEYS[3]
local o = cjson.decode(ARGV[1])
local now = tonumber(o.now)

-- Until when the record holds something: 'inf', a time in ms, or nil (nothing).
local function liveUntil()
  local h = redis.call('HGETALL', key)
  local last = nil
  for i = 1, #h, 2 do
    local kind = string.sub(h[i], 1, 2)
    if kind == 'p|' then return 'inf' end
    if kind == 's|' then
      local e = cjson.decode(h[i + 1]).expiresAt
      if e == nil then return 'inf' end
      e = tonumber(e)
      if e > now and (last == nil or e > last) then last = e end
    end
  end
  return last
end

local function reindex(listedAt)
  local untilAt = liveUntil()
  local expired = redis.call('ZSCORE', expiry, o.recipient)
  if untilAt == nil or (expired and tonumber(expired) <= now) then
    redis.call('ZREM', index, o.recipient)
    redis.call('ZREM', expiry, o.recipient)
  end
  if untilAt == nil then return end
  redis.call('ZADD', index, 'NX', listedAt, o.recipient)
  if untilAt == 'inf' then
    redis.call('ZREM', expiry, o.recipient)
  else
    redis.call('ZADD', expiry, string.format('%.0f', untilAt), o.recipient)
  end
end

local out
if o.mode == 'add' then
  local changed = redis.call('HSETNX', key, o.field, o.value)
  if changed == 0 then
    local e = cjson.decode(redis.call('HGET', key, o.field)).expiresAt
    if e ~= nil and tonumber(e) <= now then
      redis.call('HSET', key, o.field, o.value)
      changed = 1
    end
  end
  local e = cjson.decode(redis.call('HGET', key, o.field)).expiresAt
  out = { changed, redis.call('HGET', key, 'pv') or '0', e == nil and '' or string.format('%.0f', tonumber(e)) }
elseif o.mode == 'remove' then
  out = { redis.call('HDEL', key, o.field), redis.call('HGET', key, 'pv') or '0' }
elseif o.mode == 'opt-out' then
  local field = o.optOuts[1]
  if redis.call('HSETNX', key, field, o.detail) == 0 then
    out = { 0, redis.call('HGET', key, 'pv') or '0' }
  else
    out = { 1, tostring(redis.call('HINCRBY', key, 'pv', 1)) }
  end
else
  -- preferences: the whole set of opt-outs is replaced (PUT).
  local wanted = {}
  for _, f in ipairs(o.optOuts) do wanted[f] = true end
  out = { 1, '' }
  local fields = redis.call('HKEYS', key)
  for _, f in ipairs(fields) do
    if string.sub(f, 1, 2) == 'p|' and not wanted[f] then
      redis.call('HDEL', key, f)
      out[#out + 1] = f
    end
  end
  for _, f in ipairs(o.optOuts) do redis.call('HSET', key, f, o.detail) end
  out[2] = tostring(redis.call('HINCRBY', key, 'pv', 1))
end
reindex(o.now)
return out
