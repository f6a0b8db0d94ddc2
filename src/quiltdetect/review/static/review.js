// Keyboard shortcuts of the judging page (a quilt: s n u; a dropped page: d n u). Served as a
// static file: the page's CSP allows no inline script, and crawled text is never turned into markup.
(function () {
  "use strict";
  function click(selector) {
    var el = document.querySelector(selector);
    if (el) { el.click(); return true; }
    return false;
  }
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.tagName === "TEXTAREA" || target.tagName === "INPUT" || target.tagName === "SELECT");
    if (event.key === "Escape" && typing) { target.blur(); return; }
    if (typing || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var handled = false;
    switch (event.key) {
      case "s": handled = click("button[name=label][value=spam]"); break;
      case "n": handled = click("button[name=label][value=not_spam]") ||
        click("button[name=label][value=not_duplicate]"); break;
      case "d": handled = click("button[name=label][value=duplicate]"); break;
      case "u": handled = click("button[name=label][value=undecided]"); break;
      case "j": case "ArrowRight": handled = click("a#next"); break;
      case "k": case "ArrowLeft": handled = click("a#prev"); break;
      case "e": var note = document.querySelector("textarea[name=note]");
        if (note) { note.focus(); handled = true; } break;
      case "l": handled = click("a#back"); break;
      case "o": var first = document.querySelector("a.open-quilt");
        if (first) { first.click(); handled = true; } break;
    }
    if (handled) { event.preventDefault(); }
  });
})();
