// Live updates for the jobs and resources views: a progressive enhancement.
// The server pushes re-rendered fragments (escaped by Jinja) whose root element has an
// id; this script replaces the element with that id, or appends a new row. It never
// builds markup from event data itself.
(function () {
  "use strict";
  var container = document.querySelector("[data-live-swap]");
  var status = document.querySelector("[data-live-status]");
  if (!container || !window.EventSource) {
    return;
  }

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  // The browser reconnects by itself and sends Last-Event-ID, so nothing is missed.
  var source = new EventSource(container.getAttribute("data-live-swap"));
  source.addEventListener("open", function () {
    say("Live: changes appear as they happen.");
  });
  source.addEventListener("error", function () {
    say(source.readyState === EventSource.CLOSED
      ? "Live updates stopped. Reload the page to see changes."
      : "Live updates interrupted; reconnecting…");
  });
  // The server ends the stream when the sign-in ends (signed out, token revoked, idle):
  // reconnecting would only be refused, so stop and say why.
  source.addEventListener("signed-out", function (message) {
    source.close();
    say(message.data);
  });

  source.addEventListener("swap", function (message) {
    var template = document.createElement("template");
    template.innerHTML = message.data.trim();
    var fresh = template.content.firstElementChild;
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
    say("Live: updated after event #" + message.lastEventId + ".");
  });
})();
