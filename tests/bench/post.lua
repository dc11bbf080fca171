-- post.lua -- wrk: POST /posts (a new published post each time) as the
-- session in SID/CSRF, pausing DELAY_MS between requests (wrk's delay())
-- so the deferred fan-out a run leaves behind stays bounded.
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

function init(args)
  i = 0
  pause = tonumber(os.getenv("DELAY_MS") or "0")
  csrf = os.getenv("CSRF")
  wrk.method = "POST"
  wrk.path = "/posts"
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  wrk.headers["Cookie"] = "sid=" .. os.getenv("SID")
end

function delay()
  return pause
end

function request()
  i = i + 1
  return wrk.format(nil, nil, nil, "topic=general&body=Benchmark+post+" ..
    tid .. "-" .. i .. "&csrf=" .. csrf)
end
