-- A cancel's tombstone on a record (a message, a cancellation key): which
-- recipients are cancelled, '*' for all, else a JSON array. Each cancel of
-- some recipients adds to those cancelled before; a cancel of all covers
-- every later one. Returns whether this was the record's first cancel.
local function tombstone(key, o)
  local before = redis.call('HGET', key, 'cancelRecipients')
  local merged
  if before == '*' or not o.recipients then
    merged = '*'
  else
    local seen, list = {}, {}
    local function add(r)
      if not seen[r] then
        seen[r] = true
        list[#list + 1] = r
      end
    end
    if before then
      for _, r in ipairs(cjson.decode(before)) do add(r) end
    end
    for _, r in ipairs(o.recipients) do add(r) end
    merged = cjson.encode(list)
  end
  if before then
    redis.call('HSET', key, 'cancelRecipients', merged)
  else
    redis.call('HSET', key, 'cancelRecipients', merged, 'cancelledAt', o.now, 'cancelReason', o.reason,
      'cancelledBy', o.by)
  end
  return before == nil or before == false
end

-- Operation and message keys are 64 hex digits; every other field of a record is its own.
local function isKeyField(field)
  return #field == 64 and not string.find(field, '[^0-9a-f]')
end
