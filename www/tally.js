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

  // A reconciliation in progress: the page refreshes itself each second
  // until the run is done (its progress bar comes from the server).
  if (document.querySelector('[data-run-id][data-state="running"],' +
      '[data-run-id][data-state="queued"]')) {
    setTimeout(function () { window.location.reload(); }, 1000);
  }

  // Badges: poll /badges.json with If-None-Match; a 304 changes nothing.
  var box = document.querySelector('[data-badges]');
  if (!box || !window.fetch) return;
  var etag = null, delay = 15000;
  var names = {
    notifications: 'unread-notifications', notices: 'unread-notices',
    followed: 'unread-followed', red_dot: 'red-dot'
  };
  function show(data) {
    Object.keys(names).forEach(function (k) {
      var el = box.querySelector('[data-counter="' + names[k] + '"]');
      if (!el) return;
      var v = k === 'red_dot' ? (data[k] ? 1 : 0) : Number(data[k]);
      el.textContent = String(v);
      if (v === 0) el.setAttribute('data-zero', ''); else el.removeAttribute('data-zero');
    });
  }
  function poll() {
    var headers = etag ? { 'If-None-Match': etag } : {};
    fetch('/badges.json', { headers: headers, credentials: 'same-origin' })
      .then(function (r) {
        if (r.status === 200) {
          etag = r.headers.get('ETag');
          return r.json().then(show);
        }
        if (r.status === 401) delay = 0;	// logged out: stop
      })
      .catch(function () { /* offline: try again later */ })
      .then(function () { if (delay) setTimeout(poll, delay); });
  }
  setTimeout(poll, delay);
  document.addEventListener('visibilitychange', function () {
    if (document.visibilityState === 'visible') poll();
  });
})();
