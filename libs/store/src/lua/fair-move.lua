--[[
  A partition's fair queue between tenants (docs/tenants.md, "Fair share"):
  start-time fair queueing over per-tenant lists, first in, first out inside
  a tenant, and inside a tenant its transactional jobs before its bulk ones
  (a second list, `<tenant>|bulk`). Adds the deliver jobs of a fan-out to their tenants' lists, then
  moves as many as the deliver queue has room for (the window less the jobs
  moved that no worker has taken yet), each time the tenant whose
  next job has the smallest start tag, into the transit set. The caller adds
  what it gets to the deliver queue and then removes it from transit; a
  caller that dies in between leaves it there for `FairQueue.stale`.

  A tenant's tags advance by `scale / weight` per job, so with weights 3 and 1
  the first tenant is moved three times for each of the second's. A tenant
  that had nothing waiting starts at the virtual time (the start tag of the
  job moved last), never behind it: idle time earns no credit. When no tenant
  has anything waiting the virtual time jumps to the largest finish tag, so a
  tenant's past share is forgotten once the backlog is gone. The weight is
  read when a job is moved, so a weight change applies to the backlog too.
  Tags are integers in a double: exact up to 2^53.

  A tenant with an in-flight cap (`cap:<tenant>`, from its adds) is passed
  over while its in-flight set holds `cap` operations; it keeps its tag, so it
  is first once a place frees. An operation is in the set from its move until
  a worker reports it ended (`ended`), with a deadline renewed at each start
  (`started`): one whose worker died and whose job is never run again leaves
  the set at its deadline, so no place leaks for good. Documents of a capped
  tenant begin with their 64-character operation key.

  `queued` counts operations moved and not yet started: movers add, workers
  report the moved operations they started (`taken`). Counted in operations,
  not jobs, because a batch deliver job carries many, and at their start, not
  when a job is fetched, because a worker fetches more jobs than it runs at
  once. An operation whose worker died is started again by another, so it is
  reported then. The count is reset whenever the queue's wait and active lists
  and transit are all empty, when nothing moved can be waiting.

  Input:
    KEYS[1] tenants with jobs waiting (sorted set: tenant -> start tag of its next job)
    KEYS[2] clock (hash: v = virtual time, vmax = largest finish tag, queued = operations
            moved and not yet taken, w:<tenant> = weight, f:<tenant> = finish tag of its
            job moved last)
    KEYS[3] transit (sorted set: job document -> ms moved)
    KEYS[4] the deliver queue's wait list (BullMQ `wait`)
    KEYS[5] the deliver queue's active list (BullMQ `active`): both empty, and nothing in transit, nothing moved waits

    ARGV[1] options (JSON, ScriptOptions['fair-move'] in script-options.ts):
      listPrefix  a tenant's list is listPrefix .. tenant (the same hash slot as KEYS)
      adds        { tenant, weight, count, bulk, cap }: the next `count` documents are that
                  tenant's, of its bulk class when `bulk` is true; `cap` its in-flight
                  cap (0: none)
      inPrefix    a tenant's in-flight set is inPrefix .. tenant (sorted set: operation key -> deadline)
      started     { tenant, keys }: moved operations of a capped tenant that workers started
      ended       { tenant, keys }: moved operations of a capped tenant whose attempt ended for good
      startedUntil  now + the deadline of a started operation
      movedUntil    now + the deadline of a moved operation not yet started
      window      operations moved and not yet started, at most
      taken       moved operations workers started since they last said
      scale       a tag's advance at weight 1
      now         ms
    ARGV[2..] job documents, in the order of `adds`

  Output:
    { document, ... } the documents moved, in the order chosen
]]
local ready, clock, transit = KEYS[1], KEYS[2], KEYS[3]
local o = cjson.decode(ARGV[1])
local prefix, scale, inPrefix = o.listPrefix, tonumber(o.scale), o.inPrefix

for _, e in ipairs(o.started) do
  for _, key in ipairs(e.keys) do redis.call('ZADD', inPrefix .. e.tenant, o.startedUntil, key) end
end
for _, e in ipairs(o.ended) do
  if #e.keys > 0 then redis.call('ZREM', inPrefix .. e.tenant, unpack(e.keys)) end
end

local function num(field)
  return tonumber(redis.call('HGET', clock, field) or '0')
end

local function waitingOf(tenant)
  return redis.call('LLEN', prefix .. tenant) + redis.call('LLEN', prefix .. tenant .. '|bulk')
end

-- The tenant's cap, 0 for none; at its cap, true.
local function capOf(tenant)
  return tonumber(redis.call('HGET', clock, 'cap:' .. tenant) or '0')
end
local function atCap(tenant)
  local cap = capOf(tenant)
  if cap == 0 then return false end
  redis.call('ZREMRANGEBYSCORE', inPrefix .. tenant, '-inf', '(' .. o.now)
  return redis.call('ZCARD', inPrefix .. tenant) >= cap
end

-- The tenant with the smallest tag that is not at its cap, among the first 16: { tenant, tag } or nil.
local function chooseNext()
  local head = redis.call('ZRANGE', ready, 0, 0, 'WITHSCORES')
  if #head == 0 then return nil end
  if not atCap(head[1]) then return head end
  local more = redis.call('ZRANGE', ready, 1, 15, 'WITHSCORES')
  for i = 1, #more, 2 do
    if not atCap(more[i]) then return { more[i], more[i + 1] } end
  end
  return nil
end

local arg = 2
for _, add in ipairs(o.adds) do
  local list = prefix .. add.tenant
  if add.bulk == true then list = list .. '|bulk' end
  local waiting = waitingOf(add.tenant)
  for _ = 1, add.count do
    redis.call('RPUSH', list, ARGV[arg])
    arg = arg + 1
  end
  redis.call('HSET', clock, 'w:' .. add.tenant, add.weight, 'cap:' .. add.tenant, add.cap)
  if waiting == 0 and add.count > 0 then
    local v = num('v')
    if redis.call('ZCARD', ready) == 0 then v = num('vmax') end
    redis.call('ZADD', ready, math.max(v, num('f:' .. add.tenant)), add.tenant)
  end
end

local queued = num('queued') - tonumber(o.taken)
if queued < 0 or (redis.call('LLEN', KEYS[4]) == 0 and redis.call('LLEN', KEYS[5]) == 0 and redis.call('ZCARD', transit) == 0) then queued = 0 end
local room = tonumber(o.window) - queued
local moved = {}
while room > 0 do
  local head = chooseNext()
  if not head then break end
  local tenant, start = head[1], tonumber(head[2])
  local doc = redis.call('LPOP', prefix .. tenant) or redis.call('LPOP', prefix .. tenant .. '|bulk')
  local nextStart = start
  if doc then
    local weight = tonumber(redis.call('HGET', clock, 'w:' .. tenant) or '1')
    nextStart = start + math.max(1, math.floor(scale / weight + 0.5))
    local finish = string.format('%.0f', nextStart)
    redis.call('HSET', clock, 'f:' .. tenant, finish, 'v', string.format('%.0f', start))
    if nextStart > num('vmax') then redis.call('HSET', clock, 'vmax', finish) end
    redis.call('ZADD', transit, o.now, doc)
    if capOf(tenant) > 0 then redis.call('ZADD', inPrefix .. tenant, o.movedUntil, string.sub(doc, 1, 64)) end
    moved[#moved + 1] = doc
    room = room - 1
    queued = queued + 1
  end
  -- Its next job starts where this one finished: the virtual time is this one's start, never past it.
  if waitingOf(tenant) > 0 then
    redis.call('ZADD', ready, string.format('%.0f', nextStart), tenant)
  else
    redis.call('ZREM', ready, tenant)
  end
end
redis.call('HSET', clock, 'queued', string.format('%.0f', queued))
return moved
