"""Chinese full-text search that works and leads to sections.

Sub-extension ``snipcheck_chapter.search_zh``.  Everything below applies only
when ``html_search_language`` is Chinese:

**Section entries for the chapter's terms.**  Sphinx's search page links a
full-text hit to the top of its page; it links to a section only when the
query covers at least half of the section's title, which a term such as
版本计数器 never does in a heading such as 二、版本计数器：PyTorch 怎么知道你改过.
So every section whose title contains a term of the jieba user dictionary
(``html_search_options["dict"]``, the chapter's own terms) gets an index
entry for that term pointing at the section: the search page then lists
"版本计数器" hits that open at the right heading, and the general index lists
the terms.  Nothing is typed into the pages; a new section is indexed by its
title.

The search page also says which section such a result opens at: Sphinx
labels every result with its page's title only (``static/snipcheck-search.js``
appends the section's title, from the search index's own table of titles).

**Terms with symbols.**  jieba cuts text into runs of letters and digits
before it looks at the user dictionary, so a term such as 形态③ (a circled
digit is neither) is never indexed whole and searching for it found nothing.
The search language registered here also indexes every dictionary term that
occurs literally in a text, so each term of the dictionary is found as
written.

**One result per page, excerpts without line numbers**
(``static/snipcheck-search.js``).  Sphinx lists a page once per way it
matched (a section's index entry, the full text), and builds each excerpt
from the page's text, line numbers of code blocks included
("1import torch 2 3plain = ..."); the script keeps each page's best
result and leaves the line numbers out of the excerpt.

**Sphinx 9.0's broken Chinese search page** (sphinx-doc/sphinx#14229).

Sphinx's ``zh`` search language reuses the English Snowball stemmer, but
Sphinx 9.0 ends ``language_data.js`` with ``window.Stemmer = ChineseStemmer;``
(the class name derived from the language's name), a class that no script
defines.  The search page then stops with "ChineseStemmer is not defined" and
finds nothing, for any query.  (Fixed upstream by deriving the name from the
stemmer's file, sphinx-doc/sphinx#14416.)

When, and only when, the installed Sphinx has that defect, the ``zh`` search
language registered here also spells the stemmer code out: the same minified
English stemmer, bound under the name that it really defines.  On a Sphinx
without the defect that part does nothing.

May import Sphinx (Sphinx layer).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms import SphinxTransform
from sphinx.util.index_entries import split_index_msg

from snipcheck_chapter import add_static, metadata

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.config import Config
    from sphinx.environment import BuildEnvironment
    from sphinx.search import SearchLanguage

_DEFINED = re.compile(r"\b(?:var|let|const)\s+(\w+Stemmer)\s*=|\b(\w+Stemmer)\s*=\s*function")


def fixed_chinese() -> type[SearchLanguage] | None:
    """A ``zh`` search language with a working stemmer binding, or ``None``
    when Sphinx's own is fine (or is not built the way this fix expects)."""
    try:
        from sphinx import search
        from sphinx.search.zh import SearchChinese
    except ImportError:
        return None
    minified = getattr(search, "_MINIFIED_JS_PATH", None)
    rawcode = SearchChinese.js_stemmer_rawcode
    if minified is None or not rawcode:
        return None
    try:
        base = Path(minified, "base-stemmer.js").read_text(encoding="utf-8")
        stemmer = Path(minified, rawcode).read_text(encoding="utf-8")
    except OSError:
        return None
    emitted = f"{SearchChinese.language_name}Stemmer"
    defined = [a or b for a, b in _DEFINED.findall(stemmer)]
    if emitted in defined or len(defined) != 1:
        return None  # Sphinx binds the right class, or the file is not what we know

    class SearchChineseFixed(SearchChinese):
        js_stemmer_rawcode = ""  # so Sphinx uses js_stemmer_code as it is
        js_stemmer_code = "\n".join((base, stemmer, f"window.Stemmer = {defined[0]};"))

    SearchChineseFixed.__doc__ = SearchChinese.__doc__
    return SearchChineseFixed


# --- section entries for the dictionary's terms ------------------------------------


def absolute_dictionary(app: Sphinx, config: Config) -> None:
    """Make a relative ``html_search_options["dict"]`` absolute, against the
    configuration directory (``config-inited``).  Sphinx hands it to jieba
    as it is, which reads it against the working directory: a build started
    elsewhere silently lost the dictionary."""
    options = config.html_search_options
    if isinstance(options, dict) and isinstance(options.get("dict"), str) and options["dict"]:
        path = Path(options["dict"])
        if not path.is_absolute():
            config.html_search_options = {**options, "dict": str(Path(app.confdir, path))}


def dictionary(config: Config) -> Path | None:
    """The jieba user dictionary of a Chinese search, or ``None``."""
    if not str(config.html_search_language or config.language or "").startswith("zh"):
        return None
    options = config.html_search_options
    name = options.get("dict") if isinstance(options, dict) else None
    return Path(name) if isinstance(name, str) and name else None


def terms(path: Path) -> tuple[str, ...]:
    """The words of a jieba user dictionary (``word [freq] [tag]`` per line),
    longest first."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ()
    words = {line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")}
    return tuple(sorted(words, key=lambda w: (-len(w), w)))


class IndexSectionTerms(SphinxTransform):
    """Give each section whose title holds a dictionary term an index entry
    for that term, targeting the section (read time, before Sphinx collects
    index entries)."""

    default_priority = 500

    def apply(self, **kwargs: Any) -> None:
        path = dictionary(self.config)
        if path is None:
            return
        words = terms(path)
        if not words:
            return
        self.env.note_dependency(str(path))
        for section in self.document.findall(nodes.section):
            if not section.children or not isinstance(section[0], nodes.title) or not section["ids"]:
                continue
            title = section[0].astext()
            found = [w for w in words if w in title]
            if not found:
                continue
            index = addnodes.index(entries=[("single", w, section["ids"][0], "main", None) for w in found])
            index["inline"] = False
            section.insert(1, index)


def keep_index_entries(app: Sphinx, env: BuildEnvironment) -> None:
    """Give the search index the index entries of every page, not only of the
    pages written in this build (``env-updated``).

    Sphinx fills them while it writes pages and keeps them nowhere that
    survives to the next build, so an incremental build published a search
    index holding only the rewritten pages' entries (sphinx-doc/sphinx#12599):
    版本计数器 then found no section.  They are rebuilt here from the index
    domain's per-page entries, the same way Sphinx's indexer derives them.
    """
    store = getattr(env, "_search_index_index_entries", None)
    entries = env.domaindata.get("index", {}).get("entries")
    if not isinstance(store, dict) or not isinstance(entries, dict):
        return
    store.clear()
    for docname in sorted(env.all_docs):
        found: set[tuple[str, str, str]] = set()
        for entry_type, value, target_id, main, *_ in entries.get(docname, ()):
            try:
                parts = split_index_msg(entry_type, value)
            except ValueError:
                continue
            found |= {(part, target_id, main) for part in parts}
        if found:
            store[docname] = sorted(found)


def chinese_with_terms(base: type[SearchLanguage]) -> type[SearchLanguage]:
    """``base`` (Sphinx's Chinese search language, or its fixed version) that
    also indexes every user-dictionary term occurring in a text as one word,
    whatever characters it holds (see the module docstring)."""

    class SearchChineseTerms(base):  # type: ignore[valid-type,misc]
        def __init__(self, options: dict[str, str]) -> None:
            super().__init__(options)
            name = options.get("dict") if isinstance(options, dict) else None
            self.dictionary_terms = terms(Path(name)) if isinstance(name, str) and name else ()

        def split(self, input: str) -> list[str]:
            words: list[str] = super().split(input)
            found = set(words)  # a set: a long output has many words, a dictionary many terms
            return words + [t for t in self.dictionary_terms if t not in found and t in input]

    SearchChineseTerms.__doc__ = base.__doc__
    return SearchChineseTerms


def setup(app: Sphinx) -> dict[str, Any]:
    """Sub-extension ``snipcheck_chapter.search_zh``."""
    app.setup_extension("snipcheck")
    app.connect("config-inited", absolute_dictionary)
    app.connect("env-updated", keep_index_entries)
    app.add_transform(IndexSectionTerms)
    # One result per page, section names, excerpts without line numbers.
    add_static(app, js="snipcheck-search.js", js_defer=True)
    try:
        from sphinx.search.zh import SearchChinese
    except ImportError:
        return metadata()
    app.add_search_language(chinese_with_terms(fixed_chinese() or SearchChinese))
    return metadata()
