-- form.lua -- wrk: the request shape of like.lua (POST, the same cookie,
-- content type and csrf body) sent to the URL's own path, for a baseline
-- that differs from a like only in what the FastCGI program does.
-- Environment: SID, CSRF.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Cookie"] = "sid=" .. os.getenv("SID")
wrk.body = "csrf=" .. os.getenv("CSRF")
