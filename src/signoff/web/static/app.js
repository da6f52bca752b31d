// signoff web inbox: live updates (server-sent events) and keyboard shortcuts.
// No inline script anywhere (CSP script-src 'self'); fragments come from our own
// server, rendered and escaped there.
(function () {
  "use strict";
  var page = document.body.getAttribute("data-page");

  function fragment(url, done) {
    fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (res) {
        if (res.status !== 200) { done(null, res); return; }
        return res.text().then(function (text) {
          var tpl = document.createElement("template");
          tpl.innerHTML = text.trim();
          done(tpl.content.firstElementChild, res);
        });
      })
      .catch(function () { done(null, null); });
  }

  function updateCount() {
    var list = document.getElementById("cards");
    var count = document.getElementById("count");
    var empty = document.getElementById("empty");
    if (!list) { return; }
    var n = list.querySelectorAll("li.card").length;
    if (count) { count.textContent = String(n); }
    if (empty) { empty.hidden = n > 0; }
  }

  function onInboxEvent(data) {
    var list = document.getElementById("cards");
    if (!list || !data.request_id) { return; }
    var query = list.getAttribute("data-query") || "";
    var id = data.request_id;
    fragment("/fragments/card/" + encodeURIComponent(id) + "?" + query, function (node, res) {
      var old = list.querySelector('li.card[data-id="' + CSS.escape(id) + '"]');
      if (node) {
        if (old) { old.replaceWith(node); } else { list.insertBefore(node, list.firstChild); }
      } else if (res && res.status === 204 && old) {
        old.remove();
      }
      updateCount();
    });
  }

  // The request's status card, the run's progress included. While the run is moving
  // (a worker resumes it: no event marks the model's next turn) it is fetched again,
  // each time a little later, until it stops moving.
  var pollTimer = null;
  var pollDelay = 500;
  function refreshStatus() {
    var status = document.getElementById("status");
    if (!status) { return; }
    var id = status.getAttribute("data-id");
    fragment("/fragments/request/" + encodeURIComponent(id) + "/status", function (node, res) {
      if (!node) { return; }
      document.getElementById("status").replaceWith(node);
      var state = res.headers.get("X-Signoff-State");
      var decide = document.getElementById("decide");
      if (decide && state !== "pending") { decide.remove(); }
      var keys = document.getElementById("keys");
      if (keys && state !== "pending") { keys.remove(); }
      pollWhileMoving();
    });
  }
  function pollWhileMoving() {
    var status = document.getElementById("status");
    if (pollTimer || !status || status.getAttribute("data-moving") !== "1") {
      pollDelay = 500;
      return;
    }
    pollTimer = setTimeout(function () { pollTimer = null; refreshStatus(); }, pollDelay);
    pollDelay = Math.min(pollDelay * 2, 5000);
  }

  function onRequestEvent(data) {
    var status = document.getElementById("status");
    if (!status) { return; }
    var run = status.getAttribute("data-run");
    if (data.request_id === status.getAttribute("data-id") || (run && data.run_id === run)) {
      pollDelay = 500;
      refreshStatus();
    }
  }

  function listen() {
    if (!window.EventSource || (page !== "inbox" && page !== "request")) { return; }
    // Start from the feed position the page was rendered at, so nothing in between is lost.
    var seq = document.body.getAttribute("data-seq");
    var source = new EventSource("/api/events" + (seq ? "?after=" + encodeURIComponent(seq) : ""));
    var live = document.getElementById("live");
    source.onopen = function () { if (live) { live.hidden = false; } };
    source.onerror = function () { if (live) { live.hidden = true; } };
    var handler = function (ev) {
      var data;
      try { data = JSON.parse(ev.data); } catch (e) { return; }
      if (page === "inbox") { onInboxEvent(data); } else { onRequestEvent(data); }
    };
    ["request.created", "request.decided", "request.expired", "request.claimed",
      "request.finished", "request.in_doubt", "request.resolved", "notify.delivered",
      "notify.failed", "run.claimed"].forEach(function (kind) {
      source.addEventListener(kind, handler);
    });
  }

  // ---------------------------------------------------------------- keys
  var selected = -1;
  function cards() { return Array.prototype.slice.call(document.querySelectorAll("#cards li.card")); }
  function select(i) {
    var all = cards();
    if (!all.length) { return; }
    selected = Math.max(0, Math.min(all.length - 1, i));
    all.forEach(function (c, k) { c.classList.toggle("selected", k === selected); });
    var link = all[selected].querySelector("a");
    if (link) { link.focus(); }
  }
  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || typing(ev.target)) { return; }
    var key = ev.key;
    if (page === "inbox") {
      if (key === "j") { select(selected + 1); ev.preventDefault(); }
      else if (key === "k") { select(selected - 1); ev.preventDefault(); }
      return;
    }
    if (page !== "request") { return; }
    var form = null;
    if (key === "a") { form = document.getElementById("form-approve"); if (form) { form.submit(); } }
    else if (key === "s") { form = document.getElementById("form-skip"); if (form) { form.submit(); } }
    else if (key === "r") { var r = document.getElementById("reject-reason"); if (r) { r.focus(); } }
    else if (key === "e") { var e = document.getElementById("edit-arguments"); if (e) { e.focus(); } }
    else { return; }
    ev.preventDefault();
  });

  listen();
  if (page === "request") { pollWhileMoving(); }
})();
