--[[
  Claim an operation before any provider call (docs/protocol.md, invariant 3).
  One call claims one or more operations (those a deliver batch starts
  together), each exactly as if it had a call of its own, one after another:
  its own keys, options and answer, one lock and one fence per operation.

  Input, for the i-th operation: KEYS[11 * (i - 1) + n] is its KEYS[n] below,
  and its ARGV follow the operations before it (runEach in scripts.ts):
    KEYS[1] operation state hash
    KEYS[2] operation lock
    KEYS[3] journal stream of the operation's shard
    KEYS[4] active index of the operation's shard (recovery sweeper)
    KEYS[5] operation data hash (large values: the stored deliver job)
    KEYS[6] scheduled index of the operation's shard (op-schedule.lua)
    KEYS[7] the recipient's suppression copy in the operation's shard (suppression-copy.lua)
    KEYS[8] suppressed index of the operation's shard
    KEYS[9] waiting index of the operation's shard (include/wait.lua)
    KEYS[10] operation history list (the record of a rate-limit ending)
    KEYS[11] layout version of the operation's shard (include/layout.lua)

    options (JSON, ScriptOptions['claim'] in script-options.ts):
      leaseMs       lease in ms
      now           ms since epoch
      leaseUntil    now + leaseMs
      owner         worker id, for operators
      operationKey, messageKey, recipient, channel
      retentionMs   state expiry
      journalMinId  entries older than this may be trimmed
      category      the route's category ('' for none)
      required      the route must go: opt-outs do not hold it back (suppressions do)
      settleMs      how long after this holder's lease runs out a provider call
                    it started may still reach the provider (the longest call
                    deadline its lease allows), kept with the claim: until an
                    earlier holder's lease plus its settleMs have passed, an
                    operation it left `sending` is not claimed (docs/protocol.md,
                    invariant 10)
      waitReason    set when it may not go now although nothing ended it, worked
                    out before the claim: quiet_hours, document, breaker_open
                    (include/wait.lua); absent on the way of a send
      waitUntil     with waitReason: when it is looked at again (ms)
      waitingFor, waitingKey   with waitReason document: what it waits for
                    (`document:<name>`) and the document's key
      limitNote     set when the recipient is over a per-recipient limit, read
                    before the claim (the windows live in other slots;
                    RateLimiter.admit): which scope, how full, when a slot frees.
                    A first claim that would take the lock ends `suppressed`
                    (reason rate_limit) instead; absent when within every limit
    the number of documents that follow (0 or 1)
    the deliver job as JSON (optional); kept at the first claim so the
            sweeper can re-enqueue an operation whose job was lost

  Output: a list with one answer per operation, in their order:
    { "upgrade_required", held }  the shard holds another layout (include/layout.lua): nothing done
    { "script_error", message }   a key of this item has the wrong type (include/each.lua): what it wrote
                                  before stays; any other error fails the whole call
    { "claimed", fence, previousStatus, attempts, lastProvider, externalId, limitBypass, cancelRequested, stopReason }
    { "duplicate", 0, "sent", attempts, provider, externalId, "", "", "" }   already sent
    { "terminal", 0, status, attempts, provider, "", "", "", "" }            dead, suppressed or cancelled before
    { "terminal", "cancel_requested", "cancelled", attempts, provider, ... } cancelled here: a cancel asked for
                                                                             while an attempt was in flight
    { "suppressed", 0, reason, attempts, "", "", "", "", "" }                ended suppressed here (the
                                                                             recipient's stop, or rate_limit)
    { "conflict", pttl, status, attempts, "", "", "", "", "" }               another holder has the lock, or an
                                                                             earlier holder's call may still land
    { "early", dueAt, "scheduled", attempts, "", "", "", "", "" }            scheduled for later: not claimed
    { "wait", waitUntil, waitReason, attempts, "", "", "", "", began }       held back (waitReason): the wait is
                                                                             marked, not claimed; began is "1"
                                                                             when a new wait began
  limitBypass is "1" once a replay released the operation from a rate-limit suppression.
  cancelRequested is "1" when a cancel came while an earlier attempt was in
  flight (cancel-op.lua): the holder may reconcile, never send.
  stopReason is recipient_suppressed or opted_out when the recipient became
  suppressed after an earlier attempt that may have reached a provider: the
  same rule, reconcile and never send. Otherwise a suppressed recipient's
  operation ends `suppressed` here, before any lock is taken: a bounce
  recorded while a retry waits stops that retry. So does a first claim over a
  per-recipient limit (limitNote), unless a replay released it (limitBypass).

  This script is where "may this operation be sent now?" is answered, in the
  same atomic step that takes the lock: a cancel (cancel-op.lua writes the
  state this reads), a send-at time, and the recipient's suppressions and
  opt-outs (the copy in this shard) are checked here, never in a round trip of
  their own, so an operation is either cancelled (or suppressed) or claimed,
  never both. The per-recipient limits are the one input read elsewhere (their
  windows are not in this shard) and passed in, like a hold: the answer to
  them is still given here, after every way the operation ends otherwise.

  One read of the state, one write: the counters are computed here instead of
  HINCRBY'd one by one (the script is atomic, so this is the same), and every
  command a script runs is one more command to execute and to append to the AOF.
  Times come as decimal strings and counters are formatted with '%d' (see
  script-options.ts: a Lua number handed to redis.call costs a "%.17g").
]]
--@include "include/layout.lua"
--@include "include/terminal.lua"
--@include "include/journal.lua"
--@include "include/retain.lua"
--@include "include/wait.lua"
--@include "include/each.lua"
-- One operation's claim: K holds its 11 keys (KEYS[1..11] above), o its
-- options; its stored job, when given, is ARGV[first] (include/each.lua).
local function claimOne(K, o, first, documents)
  local job = documents > 0 and ARGV[first] or ''
  local refusedBy = layoutRefusal(K[11])
  if refusedBy then return { 'upgrade_required', refusedBy } end
  local opKey, lockKey, journalKey, indexKey, dataKey, scheduledKey = K[1], K[2], K[3], K[4], K[5], K[6]
  local suppKey, suppressedKey, waitingIndexKey, historyKey = K[7], K[8], K[9], K[10]
  local now, leaseUntil = o.now, o.leaseUntil

  local state = redis.call('HMGET', opKey, 'status', 'attempts', 'provider', 'externalId', 'limitBypass', 'fence',
    'createdAt', 'waitingReason', 'scheduledFor', 'cancelRequested', 'leaseUntil', 'settleMs')
  local status = state[1] or 'pending'
  local attempts = tonumber(state[2] or '0')
  local provider = state[3] or ''
  local externalId = state[4] or ''

  if status == 'sent' then
    -- The same fields as the commit's entries, so the stream stores this entry
    -- against its node's master fields (values only) instead of with its own names.
    journalAdd(journalKey, o.journalMinId, { type = 'duplicate', op = o.operationKey, msg = o.messageKey,
      recipient = o.recipient, channel = o.channel, provider = provider, extId = externalId, fence = '', err = '',
      reason = '', ts = now })
    return { 'duplicate', 0, status, attempts, provider, externalId, '', '', '' }
  end
  if isTerminal(status) then
    return { 'terminal', 0, status, attempts, provider, '', '', '', '' }
  end
  -- Scheduled for later: a job that comes early (a redelivery, the sweeper)
  -- is not an attempt; it is put back until the operation is due.
  if status == 'scheduled' and state[9] and tonumber(state[9]) > tonumber(now) then
    return { 'early', state[9], status, attempts, '', '', '', '', '' }
  end
  -- A cancel asked for while an attempt was in flight, and that attempt left
  -- nothing that may have reached a provider: it ends here, cancelled. (After
  -- `sending` or `in_doubt` the holder reconciles first; see the output above.)
  local cancelRequested = state[10] and '1' or ''
  if cancelRequested == '1' and status ~= 'sending' and status ~= 'in_doubt' then
    local id = journalAdd(journalKey, o.journalMinId, { type = 'cancelled', op = o.operationKey, msg = o.messageKey,
      recipient = o.recipient, channel = o.channel, reason = 'cancel_requested', ts = now })
    local ids = redis.call('HGET', opKey, 'journalIds')
    redis.call('HSET', opKey, 'status', 'cancelled', 'updatedAt', now, 'journalIds', ids and (ids .. ',' .. id) or id)
    redis.call('ZREM', indexKey, o.operationKey)
    return { 'terminal', 'cancel_requested', 'cancelled', attempts, provider, '', '', '', '' }
  end

  -- The recipient's suppressions and opt-outs for this channel and category,
  -- from the copy in this shard: each value is its expiry ('' for none).
  local c = o.category ~= '' and o.category or '-'
  local ch = o.channel
  local s = redis.call('HMGET', suppKey, 's|' .. ch .. '|*', 's|' .. ch .. '|' .. c, 'p|' .. ch .. '|*', 'p|' .. ch .. '|' .. c,
    'p|*|*', 'p|*|' .. c)
  -- The wait (include/wait.lua) ends here, whatever it was for: claimed or ended.
  local function clearWaiting()
    redis.call('HDEL', opKey, 'waitingReason', 'waitingUntil', 'waitingSince', 'waitingFor', 'waitingKey')
    redis.call('ZREM', waitingIndexKey, o.operationKey)
  end
  local function live(v) return v and (v == '' or tonumber(v) > tonumber(now)) end
  local stopReason = ''
  if live(s[1]) or live(s[2]) then
    stopReason = 'recipient_suppressed'
  elseif not o.required and (live(s[3]) or live(s[4]) or live(s[5]) or live(s[6])) then
    stopReason = 'opted_out'
  end

  -- Ends the operation suppressed here, before any lock is taken (a recipient's
  -- stop, or a first claim over a limit): one journal entry, the state with
  -- `fields` added, the indexes moved. `entry` holds the journal fields that
  -- differ by reason.
  local function endSuppressed(reason, entry, fields)
    entry.type, entry.op, entry.msg, entry.recipient, entry.channel, entry.reason, entry.ts =
      'suppressed', o.operationKey, o.messageKey, o.recipient, o.channel, reason, now
    local id = journalAdd(journalKey, o.journalMinId, entry)
    local ids = redis.call('HGET', opKey, 'journalIds')
    for _, v in ipairs({ 'status', 'suppressed', 'reason', reason, 'updatedAt', now, 'journalIds', ids and (ids .. ',' .. id) or id }) do
      fields[#fields + 1] = v
    end
    if not state[7] then
      for _, v in ipairs({ 'createdAt', now, 'messageKey', o.messageKey, 'recipient', o.recipient, 'channel', o.channel }) do
        fields[#fields + 1] = v
      end
    end
    redis.call('HSET', opKey, unpack(fields))
    redis.call('HDEL', opKey, 'scheduledFor', 'scheduleReason')
    if state[8] then clearWaiting() end
    redis.call('ZREM', indexKey, o.operationKey)
    redis.call('ZREM', scheduledKey, o.operationKey)
    redis.call('ZADD', suppressedKey, now, o.operationKey)
    retain(opKey, o.retentionMs)
    return { 'suppressed', 0, reason, attempts, '', '', '', '', '' }
  end

  if stopReason ~= '' and status ~= 'sending' and status ~= 'in_doubt' then
    return endSuppressed(stopReason, {}, {})
  end

  -- It may not go now although nothing ended it (its quiet hours, a document not
  -- stored yet, the breakers: worked out before the claim and passed in). Checked
  -- after every way it can end, so a cancelled or suppressed operation ends now
  -- instead of waiting first; the wait is marked in place of the lock, unless
  -- another holder has the lock.
  if o.waitReason then
    local held = redis.call('PTTL', lockKey)
    if held ~= -2 then return { 'conflict', held, status, attempts, '', '', '', '', '' } end
    local began = markWait(opKey, journalKey, waitingIndexKey, state[1], o)
    return { 'wait', o.waitUntil, o.waitReason, attempts, '', '', '', '', began }
  end

  -- Over a per-recipient limit (read before the claim and passed in): checked
  -- after every other ending and after the wait, so a cancelled operation ends
  -- cancelled and one inside its quiet hours waits (its limit is looked at again
  -- when it wakes). Only the first claim counts against the limits (status
  -- pending: never claimed, or released before a call), as later ones were
  -- counted then; a replay of a rate-limited operation passes once
  -- (limitBypass). It ends suppressed before any lock is taken, leaving what
  -- the commit of that ending wrote when the limit was checked after the claim:
  -- the reason and error, the journal entry, the history record, and the
  -- stored job a replay puts back in the queue.
  if o.limitNote and not state[5] and (attempts == 0 or status == 'pending') then
    local held = redis.call('PTTL', lockKey)
    if held ~= -2 then return { 'conflict', held, status, attempts, '', '', '', '', '' } end
    if job and job ~= '' then
      redis.call('HSET', dataKey, 'job', job, 'lastError', o.limitNote)
    else
      redis.call('HSET', dataKey, 'lastError', o.limitNote)
    end
    -- No attempt was made: the record names the attempt count and fence as they stand.
    redis.call('RPUSH', historyKey, cjson.encode({ at = tonumber(now), attempt = attempts, fence = state[6] or '0',
      outcome = 'suppressed', step = 'rate_limit', errorCode = 'RATE_LIMIT', error = o.limitNote }))
    redis.call('LTRIM', historyKey, -200, -1)
    retain(historyKey, o.retentionMs)
    retain(dataKey, o.retentionMs)
    return endSuppressed('rate_limit', { provider = '', extId = '', fence = '', err = 'RATE_LIMIT' }, { 'lastErrorCode', 'RATE_LIMIT' })
  end

  -- Left `sending` by a holder whose lease ran out without a commit (killed,
  -- stalled, cut off from Redis): a call it started inside its lease may still be
  -- on its way to the provider, or not yet visible to the provider's lookup, for
  -- as long as a call's deadline. Reconciling before then could find nothing and
  -- send a second copy, so the operation is not claimed until the earlier
  -- holder's lease plus that deadline have passed (a live holder's lease is
  -- extended, and this moves with it). The deadline is the earlier holder's own,
  -- kept at its claim: a holder under another lease setting bounds its own calls,
  -- and one that never calls a provider (settleMs 0) leaves nothing on its way.
  if status == 'sending' and state[11] and tonumber(state[12] or '0') > 0 then
    local settledAt = tonumber(state[11]) + tonumber(state[12])
    if settledAt > tonumber(now) then
      return { 'conflict', string.format('%d', settledAt - tonumber(now)), status, attempts, '', '', '', '', '' }
    end
  end

  local fence = string.format('%d', tonumber(state[6] or '0') + 1)
  if not redis.call('SET', lockKey, fence, 'NX', 'PX', o.leaseMs) then
    -- Held. A lock without expiry (PTTL -1) cannot happen through our scripts;
    -- it is treated as held too, never stolen.
    return { 'conflict', redis.call('PTTL', lockKey), status, attempts, '', '', '', '', '' }
  end

  attempts = attempts + 1
  local attemptsText = string.format('%d', attempts)
  -- No claim time of its own: it is this claim's updatedAt while the operation
  -- is sending, and in its history afterwards (nothing read the former
  -- 'claimedAt', which every terminal commit deleted again).
  if state[7] then
    redis.call('HSET', opKey, 'fence', fence, 'attempts', attemptsText, 'status', 'sending', 'owner', o.owner,
      'leaseUntil', leaseUntil, 'settleMs', o.settleMs, 'updatedAt', now)
  else
    -- The first claim (a wait or op-schedule.lua may have created the hash before).
    redis.call('HSET', opKey, 'fence', fence, 'attempts', attemptsText, 'status', 'sending', 'owner', o.owner,
      'leaseUntil', leaseUntil, 'settleMs', o.settleMs, 'updatedAt', now, 'createdAt', now,
      'messageKey', o.messageKey, 'recipient', o.recipient, 'channel', o.channel)
    -- A job already stored (op-schedule.lua) came with an expiry: a field that
    -- is not new leaves it to retain's reading.
    if job and job ~= '' then
      if redis.call('HSET', dataKey, 'job', job) == 1 and not state[9] then retainNew(dataKey, o.retentionMs)
      else retain(dataKey, o.retentionMs) end
    end
  end
  -- No longer waiting (include/wait.lua) or scheduled (op-schedule.lua): it is being attempted.
  if state[8] then clearWaiting() end
  if state[9] then
    redis.call('HDEL', opKey, 'scheduledFor', 'scheduleReason')
    redis.call('ZREM', scheduledKey, o.operationKey)
  end
  -- A state that held none of the fields read above is this claim's creation
  -- (and were it not, retainNew would still never shorten its expiry).
  local existed = false
  for i = 1, 12 do existed = existed or state[i] ~= false end
  if existed then retain(opKey, o.retentionMs) else retainNew(opKey, o.retentionMs) end
  -- Due for a look by the sweeper once the lease ran out (the one extra command per claim).
  redis.call('ZADD', indexKey, leaseUntil, o.operationKey)
  return { 'claimed', fence, status, attempts, provider, externalId, state[5] or '', cancelRequested, stopReason }
end

-- In the order given: the same operation twice in one call answers as two
-- calls one after the other would (the second finds the first's lock).
return eachItem(11, claimOne)
