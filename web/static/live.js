// Live updates for the project page's event list: a progressive enhancement.
// Without JavaScript the page still shows the events as of loading it. The server
// renders each event as an <li>.
(function () {
  "use strict";
  var MAX_SHOWN = 100;
  var list = document.querySelector("[data-live-events]");
  if (!list || !window.hubLive) {
    return;
  }
  var live = window.hubLive;
  live.follow(list.getAttribute("data-live-events"),
    "Live: new events appear at the top as they happen.", {
      "project-event": function (message) {
        if (document.getElementById("event-" + message.lastEventId)) {
          return;
        }
        var item = live.fragment(message.data);
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
        live.say("Live: new event #" + message.lastEventId +
          (kind ? " " + kind.textContent : "") + ".");
      }
    });
})();
