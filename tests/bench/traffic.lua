-- traffic.lua -- wrk: a site's traffic, every request another user's
-- (tests/bench/traffic.sh).  Each request picks a user at random and
-- sends that user's session cookie (and csrf token, for a POST):
--   MODE=mix      40 % GET /feed, 20 % GET /u/<random login>, 15 % GET
--                 /posts/<random post>, 15 % GET /badges.json, 10 % POST
--                 /posts/<random post>/like or /unlike (half each)
--   MODE=feed     GET /feed (the "spread" feed)
--   MODE=profile  GET /u/<random login> (the "spread" profile)
--   MODE=first    GET /feed of every user once, each thread its share in
--                 order (THREADS: how many threads): every request is its
--                 user's first since signing in, nothing of it kept yet
--   MODE=post, badges, like: one part of the mix alone
--   MODE=reads    the mix without its likes and unlikes (its reads in
--                 their shares): what the mix's writes cost its reads
--   MODE=hello    GET /__hello: the baseline, with the same cookies and
--                 the same per-request work in this script
-- PUBLISH=N: besides, N requests in 1,000 publish a post (the mix as a
-- site with posts arriving: each turns its author's followers' followed
-- badges over, social/bcache.h).
-- Environment: SESSIONS (a file of "LOGIN SID CSRF" lines), POSTS (a file
-- of post ids, one a line), MODE, SEED (the random sequence; each thread
-- adds its number).
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
end

local function lines(path)
  local t = {}
  for l in io.lines(path) do
    if l ~= "" then t[#t + 1] = l end
  end
  return t
end

function init(args)
  users, cookies, bodies, posts = {}, {}, {}, {}
  for _, l in ipairs(lines(os.getenv("SESSIONS"))) do
    local login, sid, csrf = l:match("^(%S+) (%S+) (%S+)$")
    users[#users + 1] = login
    cookies[#cookies + 1] = { ["Cookie"] = "sid=" .. sid }
    bodies[#bodies + 1] = "csrf=" .. csrf
  end
  for _, l in ipairs(lines(os.getenv("POSTS"))) do posts[#posts + 1] = l end
  if #users == 0 or #posts == 0 then error("traffic.lua: no users or posts") end
  mode = os.getenv("MODE") or "mix"
  publish = tonumber(os.getenv("PUBLISH") or "0")
  math.randomseed(tonumber(os.getenv("SEED") or "1") + tid)
  threads = tonumber(os.getenv("THREADS") or "1")
  share = 0
  for u = tid, #users, threads do share = share + 1 end
  nxt, done = tid - threads, 0
  if mode == "first" then
    -- only here: a response() makes wrk parse every answer (slower)
    response = function(status, headers, body)
      done = done + 1
      if done >= share then wrk.thread:stop() end
    end
  end
  form = { ["Content-Type"] = "application/x-www-form-urlencoded" }
end

function request()
  local u = math.random(#users)
  local h = cookies[u]
  if mode == "hello" then return wrk.format("GET", "/__hello", h) end
  if mode == "feed" then return wrk.format("GET", "/feed", h) end
  if mode == "first" then
    nxt = nxt + threads
    if nxt <= #users then h = cookies[nxt] end
    return wrk.format("GET", "/feed", h)
  end
  if mode == "profile" then
    return wrk.format("GET", "/u/" .. users[math.random(#users)], h)
  end
  if publish > 0 and math.random(1000) <= publish then
    local hp = { ["Cookie"] = h["Cookie"], ["Content-Type"] = form["Content-Type"] }
    return wrk.format("POST", "/posts", hp, bodies[u] .. "&body=bench+post&topic=&publish=1")
  end
  local r = math.random(mode == "reads" and 90 or 100)
  if mode == "post" then r = 70 elseif mode == "badges" then r = 80
  elseif mode == "like" then r = 95 end
  if r <= 40 then return wrk.format("GET", "/feed", h) end
  if r <= 60 then return wrk.format("GET", "/u/" .. users[math.random(#users)], h) end
  if r <= 75 then return wrk.format("GET", "/posts/" .. posts[math.random(#posts)], h) end
  if r <= 90 then return wrk.format("GET", "/badges.json", h) end
  local hp = { ["Cookie"] = h["Cookie"], ["Content-Type"] = form["Content-Type"] }
  local what = math.random(2) == 1 and "/like" or "/unlike"
  return wrk.format("POST", "/posts/" .. posts[math.random(#posts)] .. what, hp,
    bodies[u])
end

