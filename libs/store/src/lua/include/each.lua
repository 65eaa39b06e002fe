-- eachItem(per, one): runs `one` for each item of a script that takes items
-- (EACH_SCRIPTS in scripts.ts), in the order given, and answers the list of
-- their answers. Item i's keys are KEYS[per * (i - 1) + 1 .. per * i], handed
-- to `one` as K[1..per]; its ARGV are its options (JSON), the number of its
-- documents and the documents, which `one` reads as ARGV[first .. first +
-- count - 1]. An error stops its own item only: what that item wrote before
-- stays, as after a failed call of its own, and it answers
-- { 'script_error', message } while the others are still acted on.
local function eachItem(per, one)
  local answers, at = {}, 1
  for i = 1, #KEYS / per do
    local K, count = {}, tonumber(ARGV[at + 1])
    for j = 1, per do K[j] = KEYS[(i - 1) * per + j] end
    local ok, answer = pcall(one, K, cjson.decode(ARGV[at]), at + 2, count)
    answers[i] = ok and answer or { 'script_error', type(answer) == 'table' and answer.err or tostring(answer) }
    at = at + 2 + count
  end
  return answers
end
