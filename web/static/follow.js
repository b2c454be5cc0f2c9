// What every live page does with its event stream, written once: open it, say in the
// page's status line whether it is live, and stop for good when the server says the
// sign-in ended. Each page's own script (live.js, live-swap.js, board.js) only says
// what one pushed event changes on its page.
(function () {
  "use strict";

  // The page's status line (role="status", so screen readers hear it too).
  function say(text) {
    var status = document.querySelector("[data-live-status]");
    if (status) {
      status.textContent = text;
    }
  }

  // url: the stream; live: what the status line says while connected; handlers: one
  // function per event name the page listens to. Returns nothing when the browser has
  // no EventSource (the page stays as it was loaded).
  function follow(url, live, handlers) {
    if (!window.EventSource) {
      return null;
    }
    // The browser reconnects by itself and sends Last-Event-ID, so nothing is missed.
    var source = new EventSource(url);
    source.addEventListener("open", function () {
      say(live);
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
    // The server is stopping (a restart, a deploy): the browser reconnects by itself
    // after the event's `retry:` delay and resumes after the last event it saw.
    source.addEventListener("server-restarting", function (message) {
      say(message.data);
    });
    Object.keys(handlers).forEach(function (name) {
      source.addEventListener(name, handlers[name]);
    });
    return source;
  }

  // One element from a server-rendered fragment (escaped by Jinja): scripts never build
  // markup from event data themselves.
  function fragment(html) {
    var template = document.createElement("template");
    template.innerHTML = html.trim();
    return template.content.firstElementChild;
  }

  window.hubLive = { follow: follow, say: say, fragment: fragment };
})();
