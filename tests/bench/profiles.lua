-- profiles.lua -- wrk: GET /u/LOGIN over the logins in LOGINS (comma-
-- separated), each thread from its own place in the list, so that every
-- page is read whole: more logins than a handler process keeps pages
-- (web/fcache.h: 64 a process), each asked again only after all the
-- others.  The cost of a page's work, where GET /u/LOGIN of one user
-- measures a page sent as it was kept.
-- Environment: SID (a logged-in session), LOGINS, THREADS (wrk -t).
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

function init(args)
  logins = {}
  for l in string.gmatch(os.getenv("LOGINS") or "", "[^,]+") do logins[#logins + 1] = l end
  if #logins == 0 then error("profiles.lua: no LOGINS") end
  local n = tonumber(os.getenv("THREADS") or "1")
  i = math.floor((tid - 1) * #logins / n)
  wrk.headers["Cookie"] = "sid=" .. os.getenv("SID")
end

function request()
  i = i + 1
  return wrk.format("GET", "/u/" .. logins[(i % #logins) + 1])
end
