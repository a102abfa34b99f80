/* snipcheck: on the search page, name the section that a result opens at.
 *
 * Sphinx labels every result with its page's title, even one that links to a
 * section (…/inplace.html#pytorch), so two hits on one page look the same.
 * This appends the section's title, looked up in the search index's own
 * table of titles, as plain text.  Nothing else on the page changes.
 */
(() => {
  "use strict";

  const sectionTitles = () => {
    if (typeof Search === "undefined" || !Search._index) return null;
    const index = Search._index;
    const titles = new Map();
    for (const [title, places] of Object.entries(index.alltitles || {})) {
      for (const [file, id] of places) {
        if (id) titles.set(`${index.docnames[file]}#${id}`, title);
      }
    }
    return titles;
  };

  const nameSection = (link, titles) => {
    if (link.dataset.snipcheckSection !== undefined) return;
    const href = link.getAttribute("href") || "";
    const hash = href.indexOf("#");
    if (hash < 0) return;
    const suffix = DOCUMENTATION_OPTIONS.LINK_SUFFIX || "";
    let doc = href.slice(0, hash);
    if (suffix && doc.endsWith(suffix)) doc = doc.slice(0, -suffix.length);
    const section = titles.get(`${doc}#${href.slice(hash + 1)}`);
    link.dataset.snipcheckSection = section || "";
    if (section && !link.textContent.includes(section)) link.append(` › ${section}`);
  };

  document.addEventListener("DOMContentLoaded", () => {
    const results = document.getElementById("search-results");
    if (!results) return;
    new MutationObserver(() => {
      const titles = sectionTitles();
      if (!titles) return;
      results.querySelectorAll("ul.search li > a").forEach((a) => nameSection(a, titles));
    }).observe(results, { childList: true, subtree: true });
  });
})();
