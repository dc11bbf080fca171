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
})();
