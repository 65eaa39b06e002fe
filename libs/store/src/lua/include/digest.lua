-- closeOpenDigest(groupKey, indexKey, group, st, reason, now): closes the
-- group's open digest `st.open` (st: the group's open-digest fields as read).
-- Its close record `c:<seq>` keeps what the flush needs (reason, times,
-- positions used) until the flush is enqueued (digest-close.lua, mode
-- flushed); the open-state fields go, so the next member opens the next digest.
local function closeOpenDigest(groupKey, indexKey, group, st, reason, now)
  local info = cjson.encode({ reason = reason, closedAt = now, n = st.n, count = st.count, bytes = st.bytes, openedAt = st.openedAt, closeAt = st.closeAt })
  redis.call('HSET', groupKey, 'c:' .. st.open, info)
  redis.call('HDEL', groupKey, 'open', 'n', 'count', 'bytes', 'openedAt', 'closeAt')
  redis.call('ZREM', indexKey, group .. ':' .. st.open)
  local closed = st.open
  st.open = false
  return closed
end
