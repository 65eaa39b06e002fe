--[[
  Move the IMAP cursor of one mailbox folder forward (ack after effect: called
  only once the message's decide job is in Redis).

  A UID only means something together with its folder's UIDVALIDITY (RFC 3501
  2.3.1.1), so the pair is kept in one hash and changed in one step: a new
  UIDVALIDITY replaces the old pair whatever its UID, an old one never moves
  the cursor back. One script instead of WATCH/MULTI: no retry loop, and two
  pollers of the same folder cannot interleave a read and a write.

  Input:
    KEYS[1] cursor hash (fields uidValidity, lastUid, updatedAt)

    ARGV[1] options (JSON, ScriptOptions['imap-cursor-advance'] in script-options.ts):
      uidValidity  UIDVALIDITY as a decimal string (compared as a string: it is
                   32 bit unsigned, beyond what some clients hold exactly as a double)
      uid          UID handed over (integer >= 0; 0 records a new UIDVALIDITY
                   before anything of it was handed over)
      now          ms

  Output:
    { outcome, uidValidity, lastUid }
    outcome: 'advanced'  same UIDVALIDITY, UID higher than the stored one
             'unchanged' same UIDVALIDITY, UID not higher (a retry, or a late
                         writer): the stored UID is kept
             'reset'     no cursor yet, or another UIDVALIDITY: replaced
]]
local key = KEYS[1]
local o = cjson.decode(ARGV[1])
local uid, validity = o.uid, o.uidValidity
local state = redis.call('HMGET', key, 'uidValidity', 'lastUid')
if state[1] ~= validity then
  redis.call('HSET', key, 'uidValidity', validity, 'lastUid', uid, 'updatedAt', o.now)
  return { 'reset', validity, uid }
end
local last = tonumber(state[2]) or 0
if uid > last then
  redis.call('HSET', key, 'lastUid', uid, 'updatedAt', o.now)
  return { 'advanced', validity, uid }
end
return { 'unchanged', validity, last }
