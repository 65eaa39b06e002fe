-- eachItem(per, one): runs `one` for each item of a script that takes items
-- (EACH_SCRIPTS in scripts.ts), in the order given, and answers the list of
-- their answers. Item i's keys are KEYS[per * (i - 1) + 1 .. per * i], handed
-- to `one` as K[1..per]; its ARGV are its options (JSON), the number of its
-- documents and the documents, which `one` reads as ARGV[first .. first +
-- count - 1].
--
-- A key of the wrong type is that item's own fault: it answers
-- { 'script_error', message }, what it wrote before stays (as after a failed
-- call of its own), and the others are still acted on. Every other error
-- (Redis refusing writes: OOM, READONLY, MISCONF, ...; a bug) fails the whole
-- call with the error as Redis gave it, so the caller sees its code: a refusal
-- comes at the call's first write, before any item wrote.
local function eachItem(per, one)
  local answers, at = {}, 1
  for i = 1, #KEYS / per do
    local K, count = {}, tonumber(ARGV[at + 1])
    for j = 1, per do K[j] = KEYS[(i - 1) * per + j] end
    local ok, answer = pcall(one, K, cjson.decode(ARGV[at]), at + 2, count)
    if not ok then
      local message = type(answer) == 'table' and answer.err or tostring(answer)
      -- Answered as Redis gave it, its code first (raised again, Lua would put its own in front).
      if string.sub(message, 1, 10) ~= 'WRONGTYPE ' then return redis.error_reply(message) end
      answer = { 'script_error', message }
    end
    answers[i] = answer
    at = at + 2 + count
  end
  return answers
end
