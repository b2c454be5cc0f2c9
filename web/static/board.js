// The project board's live parts: a progressive enhancement. Without JavaScript the
// board still shows every card as of loading the page.
// 1. Lease countdowns tick from the server's time written on each card (data-now), so a
//    browser whose clock is wrong still counts down the coordinator's lease. The state
//    is also a word ("stale", "expired"), never only a colour.
// 2. When the project's event stream names a task, only that task's card is fetched
//    again (with the page's filters) and put in its group, or removed when the filters
//    leave it out. The server renders the card (escaped by Jinja); this script never
//    builds markup from event data itself.
(function () {
  "use strict";
  var board = document.querySelector("[data-board]");
  if (!board || !window.hubLive) {
    return;
  }
  var live = window.hubLive;

  function duration(ms) {
    var total = Math.max(Math.floor(ms / 1000), 0);
    if (total < 60) {
      return total + " s";
    }
    var days = Math.floor(total / 86400);
    var hours = Math.floor((total % 86400) / 3600);
    var minutes = Math.floor((total % 3600) / 60);
    var parts = [[days, "d"], [hours, "h"], [minutes, "min"]];
    while (parts.length && parts[0][0] === 0) {
      parts.shift();
    }
    return parts.slice(0, 2).filter(function (p) { return p[0]; })
      .map(function (p) { return p[0] + " " + p[1]; }).join(" ");
  }

  // Each lease remembers the browser's clock when its card arrived: server time now is
  // the card's server time plus what the browser has counted since.
  function arm(lease) {
    lease.hubArrived = Date.now();
  }

  function tick() {
    var leases = board.querySelectorAll("[data-lease]");
    for (var i = 0; i < leases.length; i++) {
      var lease = leases[i];
      if (lease.hubArrived === undefined) {
        arm(lease);
      }
      var now = Number(lease.getAttribute("data-now")) + (Date.now() - lease.hubArrived);
      var expires = Number(lease.getAttribute("data-expires-at"));
      var staleAt = Number(lease.getAttribute("data-stale-at"));
      var state = now >= expires ? "expired" : (now >= staleAt ? "stale" : "live");
      var left = lease.querySelector("[data-lease-left]");
      var word = lease.querySelector("[data-lease-word]");
      if (left) {
        left.textContent = state === "expired"
          ? "ended " + duration(now - expires) + " ago"
          : duration(expires - now) + " left";
      }
      if (word) {
        word.textContent = state === "live" ? "" : state;
      }
      lease.classList.remove("lease-live", "lease-stale", "lease-expired");
      lease.classList.add("lease-" + state);
    }
  }
  tick();
  window.setInterval(tick, 1000);

  if (!window.fetch) {
    return;
  }

  function groupOf(name) {
    return board.querySelector('[data-board-group="' + name + '"]');
  }

  function count(section, delta) {
    var badge = section && section.querySelector("[data-count]");
    if (badge) {
      badge.textContent = String(Math.max(Number(badge.textContent) + delta, 0));
    }
  }

  function place(taskId, html) {
    var current = document.getElementById("card-" + taskId);
    var from = current ? current.closest("[data-board-group]") : null;
    var fresh = html ? live.fragment(html) : null;
    var to = fresh ? groupOf(fresh.getAttribute("data-group")) : null;
    if (!to) {
      // Left out by the filters, or in a group this board does not show.
      if (current) {
        current.remove();
        count(from, -1);
      }
      return;
    }
    if (current && from === to) {
      current.replaceWith(fresh);
      return;
    }
    if (current) {
      current.remove();
      count(from, -1);
    }
    var cards = to.querySelector("[data-cards]");
    cards.insertBefore(fresh, cards.firstElementChild);
    count(to, 1);
    fresh.classList.add("card-moved");
  }

  var cardUrl = board.getAttribute("data-card");
  var query = board.getAttribute("data-query") || "?";
  live.follow(board.getAttribute("data-live"), "Live: cards move as tasks change.", {
    "task-changed": function (message) {
      var taskId = message.data;
      if (!/^tsk_[A-Za-z0-9]+$/.test(taskId)) {
        return;
      }
      fetch(cardUrl + encodeURIComponent(taskId) + query, {
        credentials: "same-origin",
        headers: { "accept": "text/html" }
      }).then(function (response) {
        if (response.status === 204) {
          return "";
        }
        if (!response.ok) {
          throw new Error("card " + response.status);
        }
        return response.text();
      }).then(function (html) {
        place(taskId, html);
        tick();
        live.say("Live: task " + taskId + " changed (event #" + message.lastEventId + ").");
      }).catch(function () {
        live.say("Could not refresh task " + taskId + "; reload the page to see it.");
      });
    }
  });
})();
