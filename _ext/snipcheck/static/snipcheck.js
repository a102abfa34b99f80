/* snipcheck: a code or output block (or a table) that is wider than its box
 * scrolls sideways inside it (snipcheck.css never wraps its lines).  A reader using
 * the keyboard must be able to scroll it too, so every such block is made
 * focusable (tabindex="0"; arrow keys then scroll it), and named for screen
 * readers after the label above it when it has one.  Blocks that fit are
 * left alone, and the check runs again when the window is resized.
 *
 * Diagrams that sphinx.ext.graphviz embeds as SVG (<object>) carry their
 * alternative text only as fallback content, which assistive technology does
 * not read as the object's name; it becomes the object's aria-label.
 */
(() => {
  "use strict";

  const focusable = () => {
    document.querySelectorAll("div.highlight > pre, div.table-wrapper").forEach((pre) => {
      const scrolls = pre.scrollWidth > pre.clientWidth + 1;
      if (scrolls && !pre.hasAttribute("tabindex")) {
        pre.setAttribute("tabindex", "0");
        pre.dataset.snipcheckScroll = "";
        const block = pre.closest(".output, .snipcheck-code, div[class*='highlight-']");
        const label = block && block.previousElementSibling;
        if (label && label.classList.contains("snipcheck-output-label")) {
          pre.setAttribute("aria-label", label.textContent.trim());
        }
      } else if (!scrolls && pre.dataset.snipcheckScroll !== undefined) {
        pre.removeAttribute("tabindex");
        pre.removeAttribute("aria-label");
        delete pre.dataset.snipcheckScroll;
      }
    });
  };

  const nameDiagrams = () => {
    document.querySelectorAll("div.graphviz > object").forEach((object) => {
      const alt = object.querySelector("p.warning");
      if (alt && !object.hasAttribute("aria-label")) {
        object.setAttribute("role", "img");
        object.setAttribute("aria-label", alt.textContent.trim());
      }
    });
  };

  let pending = null;
  const later = () => {
    if (pending !== null) cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      pending = null;
      focusable();
    });
  };
  const start = () => {
    nameDiagrams();
    focusable();
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  window.addEventListener("load", focusable);
  window.addEventListener("resize", later);
  // Tabs and dropdowns show blocks that were hidden (zero width) at load.
  document.addEventListener("change", later, true);
  document.addEventListener("toggle", later, true);
})();
