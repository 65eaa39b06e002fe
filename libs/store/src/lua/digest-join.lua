--[[
  A message joins its digest group (docs/digests.md): at most once per group,
  however many times its decision runs; into the open digest, or a new one
  when none is open, the open one's close time has passed, or the item would
  take it past maxBytes. A digest that reaches maxItems closes here.

  Input:
    KEYS[1] digest group hash (KeyBuilder.digestGroup)
    KEYS[2] the group's items hash (digestItems)
    KEYS[3] the message's membership key (digestMember)
    KEYS[4] open digests of the group's shard (digestOpenIndex)

    ARGV[1] options (JSON, ScriptOptions['digest-join'] in script-options.ts):
      now          ms
      group        the group id (the open index's member prefix)
      closeAt      when a digest opened now closes (worked out in TypeScript: fixed, aligned or daily)
      maxItems     close the digest once it holds this many
      maxBytes     an item that would take the digest past this opens the next
      retentionMs  expiry of the membership and the group's records
      route, recipient, key  what the group is (kept on the group for the
                   admin list of open digests; the id alone names nothing)
    ARGV[2] the item (JSON, already bounded by the caller)

  Output:
    { status, seq, state, opened, closeAt, closedSeq1, reason1, closedSeq2, reason2 }
    status: 'joined', 'duplicate' (the message joined before: seq is that
    digest's) or 'cancelled' (a cancel took it out, or kept it out before it
    came: digest-remove.lua); state of that digest: 'open', 'closed' (not flushed yet) or
    'flushed'; opened: 1 when this call opened it; closeAt: its close time
    when open; then each digest this call closed, with its reason
    (window, bytes, max_items), for the caller to flush.
]]
--@include "include/retain.lua"
--@include "include/digest.lua"
local groupKey, itemsKey, memberKey, indexKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local o = cjson.decode(ARGV[1])
local item = ARGV[2]
local r = redis.call('HMGET', groupKey, 'seq', 'open', 'n', 'count', 'bytes', 'openedAt', 'closeAt')
local seq = tonumber(r[1]) or 0
local st = { open = r[2] or false, n = r[3], count = r[4], bytes = r[5], openedAt = r[6], closeAt = r[7] }

local member = redis.call('GET', memberKey)
if member then
  -- A cancel's mark: the message never joins this group again (until the
  -- mark expires with the retention, as a membership does).
  if string.sub(member, 1, 1) == 'x' then return { 'cancelled', '', 'removed', 0, '' } end
  local s = string.match(member, '^(%d+):')
  if st.open == s then return { 'duplicate', s, 'open', 0, st.closeAt } end
  local state = redis.call('HEXISTS', groupKey, 'c:' .. s) == 1 and 'closed' or 'flushed'
  return { 'duplicate', s, state, 0, '' }
end

local out = { 'joined', '', 'open', 0, '' }
local function closed(reason)
  out[#out + 1] = closeOpenDigest(groupKey, indexKey, o.group, st, reason, o.now)
  out[#out + 1] = reason
end
if st.open and tonumber(o.now) >= tonumber(st.closeAt) then closed('window') end
if st.open and tonumber(st.bytes) + #item > tonumber(o.maxBytes) then closed('bytes') end
if not st.open then
  seq = seq + 1
  st = { open = tostring(seq), n = '0', count = '0', bytes = '0', openedAt = o.now, closeAt = o.closeAt }
  redis.call('ZADD', indexKey, o.closeAt, o.group .. ':' .. st.open)
  redis.call('HSET', groupKey, 'route', o.route, 'to', o.recipient, 'key', o.key)
  out[4] = 1
end
local n = tonumber(st.n) + 1
st.n, st.count, st.bytes = tostring(n), tostring(tonumber(st.count) + 1), tostring(tonumber(st.bytes) + #item)
local position = st.open .. ':' .. st.n
redis.call('HSET', itemsKey, position, item)
redis.call('SET', memberKey, position, 'PX', o.retentionMs)
redis.call('HSET', groupKey, 'seq', tostring(seq), 'open', st.open, 'n', st.n, 'count', st.count, 'bytes', st.bytes, 'openedAt', st.openedAt, 'closeAt', st.closeAt)
out[2], out[5] = st.open, st.closeAt
if tonumber(st.count) >= tonumber(o.maxItems) then
  closed('max_items')
  out[3], out[5] = 'closed', ''
end
retain(groupKey, o.retentionMs)
retain(itemsKey, o.retentionMs)
return out
