-- Terminal statuses (docs/protocol.md, "Operation states"): an operation that
-- reached one is never claimed again and never rewritten by a commit; only a
-- replay moves a dead or suppressed one back to pending.
local function isTerminal(status)
  return status == 'sent' or status == 'dead' or status == 'suppressed'
end
