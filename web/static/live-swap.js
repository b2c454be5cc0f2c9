// Live updates for the jobs and resources views: a progressive enhancement.
// The server pushes re-rendered fragments whose root element has an id; this script
// replaces the element with that id, or appends a new row.
(function () {
  "use strict";
  var container = document.querySelector("[data-live-swap]");
  if (!container || !window.hubLive) {
    return;
  }
  var live = window.hubLive;
  live.follow(container.getAttribute("data-live-swap"), "Live: changes appear as they happen.", {
    swap: function (message) {
      var fresh = live.fragment(message.data);
      if (!fresh || !fresh.id) {
        return;
      }
      var current = document.getElementById(fresh.id);
      if (current) {
        current.replaceWith(fresh);
      } else {
        var empty = container.querySelector("[data-empty]");
        if (empty) {
          empty.remove();
        }
        container.appendChild(fresh);
      }
      live.say("Live: updated after event #" + message.lastEventId + ".");
    }
  });
})();
