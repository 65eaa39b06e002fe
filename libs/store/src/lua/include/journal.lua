-- The journal entry, defined once for every script that writes one
-- (`JournalFields` in journal.ts is the reading side; keep the two in step).
-- Fields are written in this order, those that are nil left out.
local JOURNAL_FIELDS = { 'type', 'op', 'msg', 'recipient', 'channel', 'provider', 'extId', 'fence', 'err',
  'by', 'via', 'from', 'reason', 'ts' }

-- Appends one entry to the shard's journal, trimmed by MINID past retention only
-- (docs/protocol.md, "Redis layout"). Returns the entry's id. The callers keep
-- the id in the state's `journalIds` (a comma-separated list), so `ops show`
-- needs no stream scan; they add it to the HSET they write anyway.
local function journalAdd(journalKey, minId, entry)
  local args = { 'XADD', journalKey, 'MINID', '~', minId, '*' }
  for _, name in ipairs(JOURNAL_FIELDS) do
    local value = entry[name]
    if value ~= nil then
      args[#args + 1] = name
      args[#args + 1] = value
    end
  end
  return redis.call(unpack(args))
end
