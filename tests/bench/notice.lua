-- notice.lua -- wrk: POST /admin/notices (a system notice to every user)
-- as the admin session in SID/CSRF; a new notice each request.
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

function init(args)
  i = 0
  csrf = os.getenv("CSRF")
  wrk.method = "POST"
  wrk.path = "/admin/notices"
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  wrk.headers["Cookie"] = "sid=" .. os.getenv("SID")
end

function request()
  i = i + 1
  return wrk.format(nil, nil, nil, "title=Bench+notice+" .. tid .. "-" .. i ..
    "&body=Maintenance+window+tonight&csrf=" .. csrf)
end
