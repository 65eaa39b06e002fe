--[[
  A cancel takes a message out of its digest group (docs/digests.md, "Cancel"):
  out of the open digest it joined, or, when it has not joined yet, kept out
  for good by a mark its join reads (digest-join.lua). A member of a digest
  that has closed stays in it: the close fixed the digest's items, and its
  flush sends those items, the same on every retry. Run after the cancel's
  tombstone and the decision's record met in the message's slot
  (cancel-message.lua, message-decided.lua), so a join that runs later
  than this finds the mark.

  Input:
    KEYS[1] digest group hash (KeyBuilder.digestGroup)
    KEYS[2] the group's items hash (digestItems)
    KEYS[3] the message's membership key (digestMember)

    ARGV[1] options (JSON, ScriptOptions['digest-remove'] in script-options.ts):
      retentionMs  expiry of the mark (as of a membership)

  Output:
    { outcome, seq }
    outcome: 'removed' (taken out of open digest seq), 'kept_out' (had not
    joined: the mark keeps it out), 'already_removed' (an earlier cancel did
    either), 'closed' (in digest seq, closed: its flush is enqueued or about
    to be) or 'flushed' (in digest seq, whose flush is enqueued).
]]
local groupKey, itemsKey, memberKey = KEYS[1], KEYS[2], KEYS[3]
local o = cjson.decode(ARGV[1])
local member = redis.call('GET', memberKey)
if not member then
  redis.call('SET', memberKey, 'x', 'PX', o.retentionMs)
  return { 'kept_out', '' }
end
if string.sub(member, 1, 1) == 'x' then return { 'already_removed', string.match(member, '^x:(%d+):') or '' } end
local seq = string.match(member, '^(%d+):')
local r = redis.call('HMGET', groupKey, 'open', 'count', 'bytes')
if r[1] ~= seq then
  -- Closed: its close record stays until the flush is enqueued.
  return { redis.call('HEXISTS', groupKey, 'c:' .. seq) == 1 and 'closed' or 'flushed', seq }
end
local item = redis.call('HGET', itemsKey, member)
redis.call('HDEL', itemsKey, member)
-- The position stays used (n): the close reads positions 1..n and skips the gaps.
redis.call('HSET', groupKey, 'count', tostring(tonumber(r[2]) - 1), 'bytes', tostring(tonumber(r[3]) - (item and #item or 0)))
redis.call('SET', memberKey, 'x:' .. member, 'KEEPTTL')
return { 'removed', seq }
