-- The journal entry, defined once for every script that writes one
-- (`JournalFields` in journal.ts is the reading side; keep the two in step).
-- Fields are written in this order, those that are nil left out.
local JOURNAL_FIELDS = { 'type', 'op', 'msg', 'recipient', 'channel', 'provider', 'extId', 'fence', 'err',
  'by', 'via', 'from', 'reason', 'ts' }

-- Appends one entry to the shard's journal, trimmed by MINID past retention only
-- (docs/protocol.md, "Redis layout"). Returns the entry's id.
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

-- Remembers where an operation's entries are, so `ops show` needs no stream scan.
local function rememberJournalId(opKey, journalId)
  local ids = redis.call('HGET', opKey, 'journalIds')
  if ids then ids = ids .. ',' .. journalId else ids = journalId end
  redis.call('HSET', opKey, 'journalIds', ids)
end
