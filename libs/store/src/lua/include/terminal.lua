-- Terminal statuses (docs/protocol.md, "Operation states"): an operation that
-- reached one is never claimed again and never rewritten by a commit; only a
-- replay moves a dead or suppressed one back to pending (a cancelled one
-- stays cancelled: the producer took it back).
local function isTerminal(status)
  return status == 'sent' or status == 'dead' or status == 'suppressed' or status == 'cancelled'
end
