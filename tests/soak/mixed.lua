-- mixed.lua -- wrk script of the soak: each connection is one logged-in
-- user (SIDS/CSRFS from the environment, comma-separated) doing a mix of
-- reads and writes: feed, profile, post page, badges, like/unlike.
local sids, csrfs, posts, logins = {}, {}, {}, {}
for s in string.gmatch(os.getenv("SIDS") or "", "[^,]+") do sids[#sids + 1] = s end
for s in string.gmatch(os.getenv("CSRFS") or "", "[^,]+") do csrfs[#csrfs + 1] = s end
for s in string.gmatch(os.getenv("POSTS") or "", "[^,]+") do posts[#posts + 1] = s end
for s in string.gmatch(os.getenv("LOGINS") or "", "[^,]+") do logins[#logins + 1] = s end

local counter = 0
function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
end

function init(args)
  n = 0
  me = (id - 1) % #sids + 1
end

function request()
  n = n + 1
  local h = { ["Cookie"] = "sid=" .. sids[me] }
  local k = n % 8
  local p = posts[(n + me) % #posts + 1]
  if k == 0 then
    return wrk.format("GET", "/feed", h)
  elseif k == 1 then
    return wrk.format("GET", "/u/" .. logins[(n + me) % #logins + 1], h)
  elseif k == 2 then
    return wrk.format("GET", "/posts/" .. p, h)
  elseif k == 3 or k == 4 then
    return wrk.format("GET", "/badges.json", h)
  else
    h["Content-Type"] = "application/x-www-form-urlencoded"
    local verb = (k == 5 or k == 7) and "like" or "unlike"
    return wrk.format("POST", "/posts/" .. p .. "/" .. verb, h, "csrf=" .. csrfs[me])
  end
end
