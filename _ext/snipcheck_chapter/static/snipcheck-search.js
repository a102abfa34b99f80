/* snipcheck_chapter.search_zh: the search page, read the way a reader expects.
 *
 * Sphinx's own search page (searchtools.js) is kept; three of its steps are
 * wrapped, through the Search object it exposes:
 *
 * - One result per page.  Sphinx lists a page once for each way it matched
 *   (a section's index entry, a title, the full text), so the same page
 *   appeared two or three times.  Only the page's best result is kept (the
 *   highest score; a result that opens at a section wins a tie).
 * - Excerpts without line numbers.  Sphinx builds an excerpt from the text of
 *   the page, where every line of a code block starts with its line number
 *   ("1import torch 2 3plain = ..."); the numbers are left out.
 * - The section a result opens at is named after the page's title
 *   ("就地操作 › 二、版本计数器：…"), from the search index's own table of
 *   titles: two results on one page no longer look the same.
 *
 * Nothing else on the page changes, and nothing is fetched from elsewhere.
 */
(() => {
  "use strict";

  // Line numbers of highlighted code: <span class="linenos"> 1</span>.
  const LINENOS = /<span class="linenos">[^<]*<\/span>/g;

  // Where each section comes in its page: "doc#id" -> rank (the index's
  // table of titles lists every page's titles in the order they appear).
  const sectionOrder = () => {
    const order = new Map();
    const index = typeof Search !== "undefined" ? Search._index : null;
    if (!index) return order;
    for (const places of Object.values(index.alltitles || {})) {
      for (const [file, id] of places) {
        const key = `${index.docnames[file]}#${id}`;
        if (id && !order.has(key)) order.set(key, order.size);
      }
    }
    return order;
  };

  const onePerPage = (results) => {
    const order = sectionOrder();
    const rank = (docName, anchor) =>
      anchor ? order.get(`${docName}${anchor}`) ?? Infinity : Infinity;
    const best = new Map();
    results.forEach((result, position) => {
      const [docName, , anchor, , score] = result;
      const kept = best.get(docName);
      // The best score wins; on a tie a result that opens at a section beats
      // the page's top, and an earlier section beats a later one.
      const better =
        kept === undefined ||
        score > kept.score ||
        (score === kept.score && rank(docName, anchor) < rank(docName, kept.anchor));
      if (better) best.set(docName, { position, score, anchor });
    });
    const keep = new Set([...best.values()].map((b) => b.position));
    return results.filter((_result, position) => keep.has(position));
  };

  const wrapSearch = () => {
    if (typeof Search === "undefined" || Search._snipcheckWrapped) return;
    Search._snipcheckWrapped = true;
    const performSearch = Search._performSearch;
    Search._performSearch = (...args) => onePerPage(performSearch(...args));
    const htmlToText = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => htmlToText(htmlString.replace(LINENOS, ""), anchor);
  };

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

  // searchtools.js is loaded before this deferred script and runs its query
  // on DOMContentLoaded, which fires after deferred scripts: the wrappers are
  // in place before the first query.
  wrapSearch();
  document.addEventListener("DOMContentLoaded", () => {
    wrapSearch();
    const results = document.getElementById("search-results");
    if (!results) return;
    new MutationObserver(() => {
      const titles = sectionTitles();
      if (!titles) return;
      results.querySelectorAll("ul.search li > a").forEach((a) => nameSection(a, titles));
    }).observe(results, { childList: true, subtree: true });
  });
})();
