// Live updates for the project page's event list: a progressive enhancement.
// Without JavaScript the page still shows the events as of loading it.
// The server renders each event as an <li> (escaped by Jinja), so this script never
// builds markup from event data itself.
(function () {
  "use strict";
  var MAX_SHOWN = 100;
  var list = document.querySelector("[data-live-events]");
  var status = document.querySelector("[data-live-status]");
  if (!list || !window.EventSource) {
    return;
  }

  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }

  // The browser reconnects by itself and sends Last-Event-ID, so nothing is missed.
  var source = new EventSource(list.getAttribute("data-live-events"));

  source.addEventListener("open", function () {
    say("Live: new events appear at the top as they happen.");
  });

  source.addEventListener("error", function () {
    say(source.readyState === EventSource.CLOSED
      ? "Live updates stopped. Reload the page to see new events."
      : "Live updates interrupted; reconnecting…");
  });

  // The server ends the stream when the sign-in ends (signed out, token revoked, idle):
  // reconnecting would only be refused, so stop and say why.
  source.addEventListener("signed-out", function (message) {
    source.close();
    say(message.data);
  });

  source.addEventListener("project-event", function (message) {
    if (document.getElementById("event-" + message.lastEventId)) {
      return;
    }
    var template = document.createElement("template");
    template.innerHTML = message.data.trim();
    var item = template.content.firstElementChild;
    if (!item) {
      return;
    }
    var empty = list.querySelector("[data-empty]");
    if (empty) {
      empty.remove();
    }
    item.classList.add("event-new");
    list.insertBefore(item, list.firstElementChild);
    while (list.children.length > MAX_SHOWN) {
      list.removeChild(list.lastElementChild);
    }
    var kind = item.querySelector(".event-kind");
    say("Live: new event #" + message.lastEventId + (kind ? " " + kind.textContent : "") + ".");
  });
})();
