// tally.js -- progressive enhancement only: every page works without it.
// No inline script anywhere (the CSP forbids it); behaviour is found
// through data-* attributes.
(function () {
  'use strict';

  // Forms marked data-confirm ask before submitting (delete buttons).
  document.addEventListener('submit', function (e) {
    var msg = e.target.getAttribute && e.target.getAttribute('data-confirm');
    if (msg && !window.confirm(msg)) e.preventDefault();
  });

  // Length counters under the post and comment boxes: the server's
  // limit (maxlength), counted in characters as the server counts them.
  document.querySelectorAll('textarea[data-count][maxlength]').forEach(function (ta) {
    var max = Number(ta.getAttribute('maxlength'));
    var out = document.createElement('small');
    out.className = 'count muted';
    out.setAttribute('aria-live', 'polite');
    function update() {
      var n = Array.from(ta.value).length;
      out.textContent = n + ' / ' + max;
    }
    ta.insertAdjacentElement('afterend', out);
    ta.addEventListener('input', update);
    update();
  });

  // Acting in place: a like, repost, follow or notification action is
  // sent with Accept: application/json and the page changes where it is
  // (the server answers the counts the next page would show).  Without
  // this script the same forms redirect back to the page (field "back").
  function plural(span, n) {
    var label = span.nextSibling;
    if (!label || label.nodeType !== 3) return;
    var m = label.textContent.match(/^(\s*[a-z]+?)s?(\s*)$/);
    if (m) label.textContent = m[1] + (n === 1 ? '' : 's') + m[2];
  }
  function setCount(el, n) {
    el.textContent = String(n);
    el.removeAttribute('data-failed');
    plural(el, n);
  }
  // A post's buttons belong to the one form around its list; the
  // article is the pressed button's.
  function onPost(btn, data) {
    var art = btn && btn.closest('article[data-post-id]');
    if (!art) return;
    ['likes', 'comments', 'reposts', 'views'].forEach(function (k) {
      var el = art.querySelector('[data-counter="post-' + k + '"]');
      if (el) setCount(el, data[k]);
    });
    if (data.liked) art.setAttribute('data-liked', '1');
    else art.removeAttribute('data-liked');
    if (data.reposted) art.setAttribute('data-reposted', '1');
    else art.removeAttribute('data-reposted');
    var base = '/posts/' + data.post_id + '/';
    art.querySelectorAll('button[formaction]').forEach(function (b) {
      var act = b.getAttribute('formaction').slice(base.length);
      if (act === 'like' || act === 'unlike') {
        b.setAttribute('formaction', base + (data.liked ? 'unlike' : 'like'));
        b.textContent = data.liked ? 'Liked' : 'Like';
      } else if (act === 'repost' || act === 'unrepost') {
        b.setAttribute('formaction', base + (data.reposted ? 'unrepost' : 'repost'));
        b.textContent = data.reposted ? 'Reposted' : 'Repost';
      }
    });
  }
  function onFollow(form, data) {
    var b = form.querySelector('button');
    var path = '/' + (data.following ? 'unfollow/' : 'follow/') +
      encodeURIComponent(data.login);
    form.setAttribute('action', path);
    if (b) {
      b.setAttribute('aria-pressed', data.following ? 'true' : 'false');
      b.setAttribute('data-following', data.following ? '1' : '0');
      b.textContent = data.following ? 'Following' : 'Follow';
      b.classList.toggle('secondary', !!data.following);
    }
    var holder = form.closest('[data-login]');
    if (holder) {
      if (data.following) holder.setAttribute('data-following', '1');
      else holder.removeAttribute('data-following');
    }
    document.querySelectorAll('[data-counter="followers"]').forEach(function (el) {
      if (el.getAttribute('data-login') === data.login) setCount(el, data.followers);
    });
  }
  document.addEventListener('submit', function (e) {
    var form = e.target;
    if (e.defaultPrevented || !window.fetch || !window.URLSearchParams ||
        !form.matches || !form.matches('form.acts, form.follow, form.note-act')) return;
    var btn = e.submitter || form.querySelector('button');
    var url = (btn && btn.getAttribute('formaction')) || form.getAttribute('action');
    e.preventDefault();
    if (btn) btn.disabled = true;
    fetch(url, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Accept': 'application/json' },
      body: new URLSearchParams(new FormData(form))
    }).then(function (r) {
      if (!r.ok) throw new Error(String(r.status));
      return r.json();
    }).then(function (data) {
      if (btn) btn.disabled = false;
      if ('post_id' in data) onPost(btn, data);
      else if ('login' in data) onFollow(form, data);
      else if ('notifications' in data) {
        show(data);
        var li = form.closest('[data-unread]');
        if (li && /\/read$/.test(url)) {
          li.setAttribute('data-unread', '0');
          form.remove();
        }
        if (/\/delete$/.test(url) && form.closest('li')) form.closest('li').remove();
      }
      if (btn) btn.focus();
      poll(true);
    }).catch(function () {
      // Not answered as expected: send the form the ordinary way.
      if (btn) btn.disabled = false;
      form.setAttribute('action', url);
      form.submit();
    });
  });

  // A reconciliation in progress: the page refreshes itself each second
  // until the run is done (its progress bar comes from the server).
  if (document.querySelector('[data-run-id][data-state="running"],' +
      '[data-run-id][data-state="queued"]')) {
    setTimeout(function () { window.location.reload(); }, 1000);
  }

  // Badges, live: an EventSource on /badges/live (nginx holds it), each
  // event the /badges.json object.  While it is open, a slow poll of
  // /badges.json (If-None-Match: a 304 changes nothing) is the safety
  // net; while it is not (refused, blocked, no EventSource), the poll
  // comes every 5 s and a stream is tried again every 10 s.
  var box = document.querySelector('[data-badges]');
  var etag = null, stopped = false, stream = null, timer = null;
  var SLOW = 60000, FAST = 5000, RETRY = 10000;
  var names = {
    notifications: 'unread-notifications', notices: 'unread-notices',
    followed: 'unread-followed', red_dot: 'red-dot'
  };
  function show(data) {
    if (!box) return;
    Object.keys(names).forEach(function (k) {
      var el = box.querySelector('[data-counter="' + names[k] + '"]');
      if (!el) return;
      var v = k === 'red_dot' ? (data[k] ? 1 : 0) : Number(data[k]);
      el.textContent = String(v);
      el.removeAttribute('data-pending');
      el.removeAttribute('data-failed');
      el.removeAttribute('title');
      if (v === 0) el.setAttribute('data-zero', ''); else el.removeAttribute('data-zero');
    });
  }
  // The next poll: never later than one already due (a stream that keeps
  // failing calls this at each try, and must not keep pushing it away).
  var due = 0;
  function schedule() {
    var ms = stream && stream.readyState === 1 ? SLOW : FAST;
    if (stopped || (timer && due <= Date.now() + ms)) return;
    clearTimeout(timer);
    due = Date.now() + ms;
    timer = setTimeout(function () { timer = null; poll(); }, ms);
  }
  function poll(once) {
    if (!box || !window.fetch) return;
    var headers = etag ? { 'If-None-Match': etag } : {};
    fetch('/badges.json', { headers: headers, credentials: 'same-origin' })
      .then(function (r) {
        if (r.status === 200) {
          etag = r.headers.get('ETag');
          return r.json().then(show);
        }
        if (r.status === 401) {	// logged out: stop
          stopped = true;
          if (stream) stream.close();
        }
      })
      .catch(function () { /* offline: try again later */ })
      .then(function () { if (once !== true) schedule(); });
  }
  function live() {
    if (stopped || !window.EventSource) return;
    stream = new EventSource('/badges/live');
    stream.onopen = schedule;
    stream.onmessage = function (e) {
      try { show(JSON.parse(e.data)); } catch (x) { /* not badges */ }
      // what the page shows is no longer the last poll's: the next poll
      // answers whole (a 304 kept a value whose correcting event was
      // lost, for good)
      etag = null;
    };
    stream.onerror = function () {
      // closed for good (refused, or Redis gone): poll, and try again
      if (stream.readyState === 2) {
        stream = null;
        // each page at its own moment: streams closed together (Redis
        // gone, nginx restarted) do not all come back in one burst
        setTimeout(live, RETRY / 2 + Math.random() * RETRY);
      }
      schedule();	// reconnecting by itself meanwhile: poll fast
    };
  }
  if (!box || !window.fetch) return;
  // The error page reads nothing (its render does no I/O): its badges
  // come pending, and are read now rather than at the first poll.
  if (box.querySelector('[data-pending]')) poll(true);
  live();
  schedule();
  document.addEventListener('visibilitychange', function () {
    if (document.visibilityState === 'visible') poll(true);
  });
})();
