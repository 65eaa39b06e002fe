-- The layout version this script was written for (LAYOUT_VERSION in
-- libs/store/src/layout-version.ts; a test keeps the two equal). A script that changes an
-- operation's state acts only on a shard stamped with it, or with none yet (no
-- process of another version has started on this Redis): a shard stamped by a
-- newer process holds data this script may misread, so it answers
-- { 'upgrade_required', held } and writes nothing.
local LAYOUT = '1'
-- Each shard's stamp is read once per call: a call that carries several
-- operations of one shard (include/each.lua) asks once, and no script that
-- includes this writes a stamp (layout-stamp.lua does, in a call of its own).
local layoutHeld = {}
local function layoutRefusal(key)
  local held = layoutHeld[key]
  if held == nil then
    held = redis.call('GET', key) or false
    layoutHeld[key] = held
  end
  if held and held ~= LAYOUT then return held end
  return nil
end
