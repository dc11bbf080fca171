-- like.lua -- wrk: POST /posts/ID/like then /posts/ID/unlike, round robin
-- over this thread's share of the posts in POSTS (comma-separated ids),
-- so every request really changes a row: each thread owns its posts, and
-- a post's unlike comes #posts requests after its like.
-- (A run ends mid-cycle, so the next one starts with up to #posts no-op
-- likes per thread: well under 1% of a run.)
-- Environment: SID, CSRF (a logged-in session), POSTS, THREADS (wrk -t).
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

function init(args)
  local all, n = {}, tonumber(os.getenv("THREADS") or "1")
  for id in string.gmatch(os.getenv("POSTS") or "", "%d+") do all[#all + 1] = id end
  posts = {}
  for i = tid, #all, n do posts[#posts + 1] = all[i] end
  if #posts == 0 then error("like.lua: no posts for thread " .. tid) end
  i = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  wrk.headers["Cookie"] = "sid=" .. os.getenv("SID")
  wrk.body = "csrf=" .. os.getenv("CSRF")
end

function request()
  local n = #posts
  local k = i % (2 * n)
  i = i + 1
  if k < n then
    return wrk.format(nil, "/posts/" .. posts[k + 1] .. "/like")
  end
  return wrk.format(nil, "/posts/" .. posts[k - n + 1] .. "/unlike")
end
