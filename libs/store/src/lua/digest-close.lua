--[[
  Close a digest and read its items in order (mode close), or drop its items
  once its flush operation is enqueued (mode flushed). Both are idempotent: a
  closed digest returns the same items in the same order however often it is
  closed again, so a close job or a decision retried after a crash flushes
  the same digest (docs/digests.md).

  Input:
    KEYS[1] digest group hash (KeyBuilder.digestGroup)
    KEYS[2] the group's items hash (digestItems)
    KEYS[3] open digests of the group's shard (digestOpenIndex)

    ARGV[1] options (JSON, ScriptOptions['digest-close'] in script-options.ts):
      mode   'close' | 'flushed'
      seq    the digest (its number in the group)
      now    ms
      group  the group id

  Output:
    mode close: { 'closed', info, item1, item2, ... } (info: JSON of reason,
    closedAt, openedAt, closeAt, count, n; items in join order, removed ones
    left out); { 'early', closeAt } for an open digest whose time has not
    come; { 'flushed' } once its flush was enqueued; { 'unknown' } for a digest
    that never opened.
    mode flushed: { 'flushed', first } (first: 1 when this call dropped the items)
]]
--@include "include/digest.lua"
local groupKey, itemsKey, indexKey = KEYS[1], KEYS[2], KEYS[3]
local o = cjson.decode(ARGV[1])
local seq = o.seq
local function positions(info)
  local fields = {}
  for i = 1, tonumber(info.n) do fields[i] = seq .. ':' .. i end
  return fields
end
local raw = redis.call('HGET', groupKey, 'c:' .. seq)
if o.mode == 'flushed' then
  if raw then
    local fields = positions(cjson.decode(raw))
    if #fields > 0 then redis.call('HDEL', itemsKey, unpack(fields)) end
    redis.call('HDEL', groupKey, 'c:' .. seq)
    return { 'flushed', 1 }
  end
  return { 'flushed', 0 }
end
if not raw then
  local r = redis.call('HMGET', groupKey, 'seq', 'open', 'n', 'count', 'bytes', 'openedAt', 'closeAt')
  local st = { open = r[2] or false, n = r[3], count = r[4], bytes = r[5], openedAt = r[6], closeAt = r[7] }
  if st.open ~= seq then
    if tonumber(seq) <= (tonumber(r[1]) or 0) then return { 'flushed' } end
    return { 'unknown' }
  end
  if tonumber(o.now) < tonumber(st.closeAt) then return { 'early', st.closeAt } end
  closeOpenDigest(groupKey, indexKey, o.group, st, 'window', o.now)
  raw = redis.call('HGET', groupKey, 'c:' .. seq)
end
local fields = positions(cjson.decode(raw))
local out = { 'closed', raw }
if #fields > 0 then
  local values = redis.call('HMGET', itemsKey, unpack(fields))
  for i = 1, #values do
    if values[i] then out[#out + 1] = values[i] end
  end
end
return out
