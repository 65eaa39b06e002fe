--[[
  Fenced commit of an attempt's outcome (docs/protocol.md, invariants 4 and 10):
  state, journal entry, history entry, sweeper index and lock release in one
  step, rejected when the caller's fence token was superseded by a later claim.
  One call commits one or more operations (the sends that ended together),
  each exactly as if it had a call of its own, one after another.

  Input, for the i-th operation: KEYS[8 * (i - 1) + n] is its KEYS[n] below,
  and its ARGV follow the operations before it (runEach in scripts.ts):
    KEYS[1] operation state hash
    KEYS[2] operation lock
    KEYS[3] journal stream of the operation's shard
    KEYS[4] operation history list
    KEYS[5] active index of the operation's shard (recovery sweeper)
    KEYS[6] suppressed index of the operation's shard
    KEYS[7] operation data hash (large values: the stored deliver job, the last error's text)
    KEYS[8] layout version of the operation's shard (include/layout.lua)

    options (JSON, ScriptOptions['commit'] in script-options.ts); optional fields
            are left out when they do not apply:
      fence          fence token of the caller (a string)
      outcome        sent | in_doubt | failed | dead | suppressed | released | cancelled
      now            ms
      retentionMs    state and history expiry (at least this long past the commit; include/retain.lua)
      journalMinId   journal MINID
      operationKey, messageKey, recipient, channel
      provider       provider name (optional)
      externalId     the provider's id (optional)
      errorCode      (optional)
      errorMessage   (optional)
      reason         why dead or suppressed (optional)
      releaseTo      the status to return to on 'released': pending | failed | in_doubt
      refundAttempt  with 'released': give back the attempt the claim counted (no
                     provider was called in that claim; optional)
      nextAttemptAt  when the next attempt is due (ms; optional = now): the sweeper
                     looks at the operation once this has passed and nobody touched it
      waitReason     with 'released': why it waits until nextAttemptAt (breaker_open;
                     optional), marked as a wait held back before the claim is
    the number of history entries that follow
    history entries (JSON, stored as they are), one per provider attempt

  A cancel that came while this attempt was in flight (`cancelRequested`,
  cancel-op.lua) turns an outcome that would try again (failed, released to
  pending or failed) into `cancelled`: nothing of this attempt reached a
  provider for sure, so nothing more is sent. An `in_doubt` stays in doubt: the
  next claim reconciles, and ends it sent or cancelled.

  Output: a list with one answer per operation, in their order:
    { "upgrade_required", held }  the shard holds another layout (include/layout.lua): nothing done
    { "script_error", message }   a key of this item has the wrong type (include/each.lua): what it wrote
                                  before stays; any other error fails the whole call
    { "ok", journalId }         journalId is '' when the outcome is not journaled, or when this
                                commit repeats one already applied (nothing written)
    { "stale", currentFence }   a newer claim exists: nothing was written

  One read of the state and one write of it (the journal entry is added first,
  so its id goes into the same HSET). Times come as decimal strings (see
  script-options.ts: a Lua number handed to redis.call costs a "%.17g").
]]
--@include "include/layout.lua"
--@include "include/retain.lua"
--@include "include/terminal.lua"
--@include "include/journal.lua"
--@include "include/each.lua"
-- One operation's commit: K holds its 8 keys (KEYS[1..8] above), o its options,
-- and its history entries are ARGV[first .. first + entries - 1].
local function commitOne(K, o, first, entries)
  local refusedBy = layoutRefusal(K[8])
  if refusedBy then return { 'upgrade_required', refusedBy } end
  local opKey, lockKey, journalKey, historyKey = K[1], K[2], K[3], K[4]
  local indexKey, suppressedKey, dataKey = K[5], K[6], K[7]
  local fence, outcome, now = o.fence, o.outcome, o.now

  local h = redis.call('HMGET', opKey, 'fence', 'status', 'attempts', 'journalIds', 'cancelRequested', 'lastErrorCode')
  if h[1] ~= fence then
    return { 'stale', h[1] or '0' }
  end
  -- Only a claim's `sending` is ended by a commit, once. A commit re-sent after a
  -- Redis restart (ioredis resends unanswered commands), or repeated by a holder
  -- whose answer was lost, finds the status its first copy wrote, under the same
  -- fence: a no-op instead of a second journal entry, a second history record
  -- or a terminal state rewritten.
  if h[2] ~= 'sending' then
    return { 'ok', '' }
  end
  -- The lock may have expired without anyone claiming since (the fence is still
  -- ours); then nobody else can have acted, and the commit stands. A lock holding
  -- another token cannot exist while the fence matches, but never trust that.
  local holder = redis.call('GET', lockKey)
  if holder and holder ~= fence then
    return { 'stale', holder }
  end

  local status = outcome
  local fields = { 'status', status, 'updatedAt', now, 'owner', '' }
  if outcome == 'released' then
    status = o.releaseTo or 'pending'
    fields[2] = status
    local attempts = tonumber(h[3] or '0')
    if o.refundAttempt and attempts > 0 then
      fields[#fields + 1] = 'attempts'
      fields[#fields + 1] = string.format('%d', attempts - 1)
    end
  end
  if h[5] and (status == 'failed' or status == 'pending') then
    status = 'cancelled'
    fields[2] = status
  end
  -- Handed back because every provider's breaker opened after the claim: it now
  -- waits as one held back before its claim would (include/wait.lua), until its
  -- next attempt, so `ops show` says why.
  if o.waitReason and outcome == 'released' and status ~= 'cancelled' then
    for _, v in ipairs({ 'waitingReason', o.waitReason, 'waitingUntil', o.nextAttemptAt or now, 'waitingSince', now }) do
      fields[#fields + 1] = v
    end
  end
  local function put(name, value)
    fields[#fields + 1] = name
    fields[#fields + 1] = value
  end
  if o.provider then put('provider', o.provider) end
  if o.externalId then put('externalId', o.externalId) end
  if o.reason then put('reason', o.reason) end
  -- No sentAt: a sent operation is terminal and never written again, so its
  -- updatedAt is when it was sent (OperationRecord.sentAt reads it so).

  local journalId = ''
  if status == 'cancelled' or outcome == 'sent' or outcome == 'in_doubt' or outcome == 'dead' or outcome == 'suppressed' then
    journalId = journalAdd(journalKey, o.journalMinId, {
      type = status == 'cancelled' and status or outcome, op = o.operationKey, msg = o.messageKey, recipient = o.recipient,
      channel = o.channel, provider = o.provider or '', extId = o.externalId or '', fence = fence,
      err = o.errorCode or '', reason = o.reason or '', ts = now })
    -- Where the operation's entries are, so `ops show` needs no stream scan.
    put('journalIds', h[4] and (h[4] .. ',' .. journalId) or journalId)
  end

  -- The error's text can be long: it goes to the data hash, its code stays here.
  if o.errorCode then
    put('lastErrorCode', o.errorCode)
    redis.call('HSET', dataKey, 'lastError', o.errorMessage or '')
  end
  -- The stored job is there for the sweeper (a lost job) and for a replay; a sent
  -- operation needs it for neither (a replay of it is refused).
  if outcome == 'sent' then redis.call('HDEL', dataKey, 'job') end
  redis.call('HSET', opKey, unpack(fields))
  -- A terminal operation holds no lease and has no owner: kept, the fields would
  -- cost every retained operation their bytes (memory-budget.test.ts pins the
  -- budget per operation). 'claimedAt' goes too, where a state still carries one.
  if isTerminal(status) then redis.call('HDEL', opKey, 'owner', 'leaseUntil', 'claimedAt') end
  redis.call('DEL', lockKey)
  retain(opKey, o.retentionMs)
  -- The data hash's last error comes with the state's lastErrorCode (here and
  -- in claim.lua's rate-limit ending): with neither, a sent operation's data
  -- held only the job just deleted, and nothing is left to keep.
  if o.errorCode or h[6] or outcome ~= 'sent' then retain(dataKey, o.retentionMs) end

  if entries > 0 then
    local length = redis.call('RPUSH', historyKey, unpack(ARGV, first, first + entries - 1))
    if length > 200 then redis.call('LTRIM', historyKey, -200, -1) end
    -- As long as what was pushed: the list began here.
    if length == entries then retainNew(historyKey, o.retentionMs) else retain(historyKey, o.retentionMs) end
  end

  -- The sweeper index: one command per commit. Terminal states leave it; the rest
  -- stay with their next check time, negated for in_doubt (see KeyBuilder.activeIndex).
  if isTerminal(status) then
    redis.call('ZREM', indexKey, o.operationKey)
  else
    local due = o.nextAttemptAt or now
    if status == 'in_doubt' then due = '-' .. due end
    redis.call('ZADD', indexKey, due, o.operationKey)
  end
  if status == 'suppressed' then redis.call('ZADD', suppressedKey, now, o.operationKey) end
  return { 'ok', journalId }
end

-- In the order given: the same operation twice in one call answers as two
-- calls one after the other would (the second finds the first's commit).
return eachItem(8, commitOne)
