"""Check builders of the catalogue's ``kinds`` stage: the parameter readers behind the kinds of ``_kinds``.

When a kind is recognised is data: each kind file's cue rules of stage ``kinds`` (cue, ``if``,
``unless``, ``group``, order) say when its builder runs. What stays here is what a kind needs to
read its parameters from the rule (quoted terms, a number and its unit, a path, a sign-off) and
the cases where one kind supersedes another compiled from the same rule. Each builder is
registered by name (:func:`toolkit.compliance._param_readers.builder`) and gets the rule's text
(typographic apostrophes straightened), the cue's match, the checks so far and the stage's state
(``text``: the rule as written; ``drop``: the labels of generic checks the kinds supersede).
"""

from __future__ import annotations

import re

from toolkit import text as tx
from toolkit.compliance._checks import Check, Forbid, Matcher, PriceCap, matcher
from toolkit.compliance._kinds import (
    _AMENITIES,
    _COUNTED,
    _IMPERIAL,
    _LITERAL_KINDS,
    _METRIC,
    _NUM_WORDS,
    _TO_KM,
    Bookend,
    CitationComma,
    CodeLanguages,
    DateFormat,
    DistanceCap,
    FileNaming,
    MaxMarks,
    MinMentions,
    ProtectedPath,
    RequireLiteral,
    Sections,
    SpellSmallNumbers,
    Substitute,
    Units,
    WrapErrors,
    _name_pattern,
    named_languages,
)
from toolkit.compliance._param_readers import builder

#: the shared negation cue (``{NEG}`` in a kind file)
_NEG = r"(?:never|don't|do not|no|avoid|stop|without|not)"
_STOPWORDS = frozenset("the a an it this that them my your our to of and or in on for with".split())
_LIST_LEX = {"amenit": _AMENITIES, "facilit": _AMENITIES}
_CONCEPTS = {
    r"dual[- ]y?[- ]?ax[ie]s|two y[- ]ax[ie]s|secondary (y[- ])?ax[ie]s|twin ax[ie]s":
        (r"\btwin[xy]\(", r"secondary_y", r"\bsecond(ary)? (y[- ])?axis\b", r"\bright(-hand)? (y[- ])?axis\b",
         r"\bdual[- ]axis\b"),
    r"pie charts?|donut charts?|doughnut charts?":
        (r"\bpie\(", r"\bpie chart", r"\bdonut\b", r"\bdoughnut\b", r"px\.pie\b"),
    r"3-?d (charts?|plots?)": (r"projection\s*=\s*['\"]3d", r"\b3-?d (chart|plot|bar)"),
}


def _drop(state: dict, *labels: str) -> None:
    state.setdefault("drop", set()).update(labels)


# -- parameter readers shared with the interpreter ----------------------------------------------
_PATH_TOKEN = r"(?P<p>(?:[\w.-]+/)+(?![\w.])|[\w-]+\.(?:csv|json|lock|env|ya?ml|toml|ini|cfg|xlsx?|txt|md|sql|db|sqlite|py|js|ts|tex)\b|\.env\b)"


def protected_paths(text: str) -> list[str]:
    """Paths a preference puts off limits, e.g. 'Leave the migrations/ folder alone', 'data/raw/ is read-only'."""
    low = text.lower().replace("\u2019", "'")
    out = []
    for rx in (rf"\b(?:leave|keep)\s+(?:the\s+|my\s+|our\s+)?{_PATH_TOKEN}\s*(?:folder|directory|dir|file)?\s+"
               r"(?:alone|untouched|as it is|as is)",
               rf"\b(?:don't|do not|never|no)\s+(?:ever\s+)?(?:touch|modify|edit|change|write|alter|overwrite|commit|"
               rf"delete|add|save|put)\w*\b[^.;]{{0,40}}?{_PATH_TOKEN}",
               rf"\btreat\s+(?:the\s+)?{_PATH_TOKEN}\s*(?:folder |directory )?as\s+(?:strictly\s+)?(?:read-only|read only|"
               r"off[- ]limits)",
               rf"{_PATH_TOKEN}\s*(?:folder |directory |file )?(?:is|are)\s+(?:strictly\s+)?(?:read-only|read only|"
               r"off[- ]limits|hands[- ]off|mine|not yours|never to be (?:edited|touched|changed))",
               rf"\bnever\s+(?:back\s+)?(?:in|into|to)\s+{_PATH_TOKEN}"):
        for m in re.finditer(rx, low):
            out.append(m.group("p"))
    m = re.search(r"\b(?:don't|do not|never|no)\s+(?:ever\s+)?(?:touch|modify|edit|change|rewrite|hand-edit|alter)\w*\s+"
                  r"((?:\.\w{1,10}(?:\s*,\s*|\s+or\s+|\s+and\s+)?)+)\s*files?\b", low)
    if m:  # "don't edit .unity, .prefab or .asset files"
        out += re.findall(r"\.\w{1,10}", m.group(1))
    return list(dict.fromkeys(out))


def quoted(text: str) -> list[str]:
    """The quoted terms of a rule ("..." or '...'), trimmed."""
    t = text.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")
    out = re.findall(r'"([^"\n]{1,80})"', t)
    out += re.findall(r"(?:(?<=[\s(])|^)'([^'\n]{1,80}?)'(?=[\s,.)!?;:]|$)", t)
    return [o.strip(" .") for o in out if o.strip(" .")]


_NEG_CLAUSE = re.compile(r"\b(?:never|don't|do not|no|avoid|skip|cut|drop|ban|without|not|leave out|keep out|"
                         r"stay away from|steer clear of|nothing)\b|\b(?:don't|doesn't|do not) belong\b|\bbanned\b", re.I)


def example_forbid(text: str) -> Forbid | None:
    """A ban on unquoted examples of things to avoid ("cut filler like circle back, synergy", "(Dyson, Philips)")."""
    items = _example_list(text)
    if not items:
        return None
    pats = tuple(r"(?<!\w)" + re.escape(x).replace(r"\ ", r"[\s-]+") + r"(?!\w)" for x in items)
    return Forbid("the things you asked me to avoid", Matcher((), pats), task_override=False,
                  ask="drop " + ", ".join(f"\u201c{x}\u201d" for x in items[:3]))


def _example_list(text: str) -> list[str]:
    """Unquoted examples of things to avoid: 'words like seamless, powerful or blazing fast'."""
    t = text.replace("\u2019", "'")
    found: list[str] = []
    for m in re.finditer(r"(?:\b(?:like|such as|e\.g\.,?|for example|including|for instance)\s+|\(|(?<=\w):\s+)"
                         r"(?P<l>[^.;:()\"\u201c]{3,160}?)(?=\)|[.;:]|$|\s+(?:don't|do not|doesn't|are|is|in|on)\b)", t):
        start = max(t.rfind(".", 0, m.start()), t.rfind(";", 0, m.start())) + 1
        end_m = re.search(r"[.;]", t[m.end():])
        clause = t[start: m.end() + (end_m.start() if end_m else len(t))]
        if not _NEG_CLAUSE.search(clause) or re.search(
                r"\b(?:don't|do not|never|no)\s+(?:ever\s+)?(?:book|buy|reserve|pay|hold|delete|remove|run|deploy|trash|bash|"
                r"badmouth|critici[sz]e|disparage|knock|touch|edit|change|send|schedule|publish|push|commit|install|rewrite|"
                r"overwrite|move)\b", clause, re.I):
            continue  # examples of what not to book or trash are objects of an action, not banned words
        raw = re.sub(r"\s*(?:,?\s*(?:and|or|etc\.?|and so on|or similar|and the like|\.\.\.|\u2026)\s*)+$", "",
                     m.group("l").strip())
        parts = [x.strip(" ,'") for x in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+or\s+|\s+and\s+", raw)]
        parts = [x for x in parts if x and len(x.split()) <= 3 and not re.match(r"(the|a|an|my|your|our|any|if|"
                                                                                  r"when|so|that|anything|something|"
                                                                                  r"everything|all|whatever)\b", x, re.I)]
        if len(parts) >= 2 and all(len(x) >= 2 for x in parts):
            found += parts
    return list(dict.fromkeys(found))


def _number(word: str) -> int | None:
    w = word.lower()
    if w.isdigit():
        return int(w)
    return _NUM_WORDS.get(w)


# -- builders, in the order the kind files' rules run -------------------------------------------
@builder("bookend_end")
def _bookend_end(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """A quoted sign-off: the phrase after "with"/"signed"/"as", else the last quoted phrase."""
    q = quoted(state["text"])
    if not q:
        return
    after_with = re.search(r"\b(?:with|signed|as)\s*:?\s*(?:a |an |the )?[\"\u201c']([^\"\u201d\n]{1,80}?)[\"\u201d']",
                           state["text"].replace("\u2019", "'"))
    out.append(Bookend(after_with.group(1).strip(" .") if after_with else q[-1], "end"))
    _drop(state, "*domain*")


@builder("bookend_start")
def _bookend_start(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """A quoted opening: the first quoted phrase."""
    q = quoted(state["text"])
    if q:
        out.append(Bookend(q[0], "start"))
        _drop(state, "*domain*")


@builder("quoted_avoid")
def _quoted_avoid(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """Quoted words or phrases the rule bans (in a clause with a negation cue), with the quoted phrases that
    merely contain a banned word allowed."""
    text = state["text"]
    low = text.lower().replace("\u2019", "'")
    straight = text.replace("\u2019", "'")
    q = quoted(text)
    q_neg = []
    for clause in re.split(r"(?<=[.!?])\s+|\s*;\s*", text):
        mneg = re.search(r"\b(never|don't|do not|avoid|stop|ban|no|not|leave out|skip|cut|drop|without)\b|"
                         r"\b(banned|forbidden|off[- ]limits)\b", clause, re.I)
        if mneg:
            tail = clause[mneg.start():] if mneg.group(1) else clause
            tail = re.split(r",\s*(?:but\s+|instead\s+|rather\s+)?(?:say|use|write|prefer|go with|pick)\b", tail,
                            maxsplit=1, flags=re.I)[0]
            q_neg += quoted(tail)
    q_fb = q_neg
    if not q_fb:
        return
    if not (re.search(r"(?:[,;]|^|[.!?])\s*(never|not)\s+[\"\u201c']", straight, re.I) or
            re.search(r"\b(?:leave out|skip|cut|drop)\b[^.;]{0,40}[(\"\u201c]", straight, re.I) or
            re.search(r"\b(?:never|don't|do not|avoid|stop|no)\b[^.;\"\u201c]{0,40}[\"\u201c]", straight, re.I) or
            re.search(r"\b(avoid|ban|never use|don't use|do not use|never say|don't say|do not say)\w*\b"
                      r"[^.;\"\u201c]{0,30}[\"\u201c]", straight, re.I)) and not (
            re.search(r"\b(never|don't|do not|avoid|stop|ban|no)\b[^.]{0,30}\b(use|say|write|words?|phrases?|"
                      r"expressions?|terms?)\b|\b(words?|phrases?|expressions?|terms?)\b[^.]{0,40}\b(banned|"
                      r"forbidden|off[- ]limits|not allowed)", low) and not any(isinstance(c, Bookend) for c in out)):
        return
    if re.search(r"\bcommit(?:s| messages?| subjects?)\b", low):
        q_fb = []  # "imperative mood ('add', not 'added')" is about the commit message, not every word of the reply
    q_fb = [x.rstrip("!?.,;: ") or x for x in q_fb]
    pats = tuple(("(?-i:" if re.search(r"[A-Z]", x) else "(?:") + r"(?<!\w)" +
                 re.escape(x).replace(r"\ ", r"\s+").replace("'", "['\u2019]") +
                 (r"(?:s|es|ed|ing)?(?!\w))" if len(x) <= 4 else r"\w{0,3}(?!\w))") for x in q_fb)
    allowed = tuple(x for x in q if x.rstrip("!?.,;: ") not in q_fb and any(b.lower() in x.lower() for b in q_fb))
    if pats:
        out.append(Forbid("the words you asked me to avoid", Matcher((), pats), task_override=False,
                          ask="drop the words I asked you to avoid", allowed=allowed))
    _drop(state, "*quoted*")


@builder("named_heading")
def _named_heading(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """One heading the reply must carry ("under a heading called 'Answers'"), unless it places items or is banned."""
    text = state["text"]
    hm = re.search(r"\b(?:heading|section|header|title)\s+(?:called|named|titled|that says)\s+[\"\u201c']([^\"\u201d']{2,40})"
                   r"[\"\u201d']", text.replace("\u2019", "'")) or re.search(
        r"[\"\u201c]([^\"\u201d]{2,40})[\"\u201d]\s+(?:section|heading|header|part|list)\b", text)
    if not hm:
        return
    if re.search(r"\b(?:go(?:es)?|put|move|belongs?)\s+(?:it\s+|them\s+)?under\b[^.]{0,30}$", text[: hm.start()], re.I):
        return  # "anything over 30 goes under a 'Splurge' heading" places some items, it does not demand the heading
    if re.search(rf"\b{_NEG}\b|\bnothing\b", text[max(0, text.rfind(".", 0, hm.start())): hm.start()], re.I):
        return  # "nothing with a 'Code generated' header" bans it
    out.append(Sections((hm.group(1).strip(" ."),)))
    _drop(state, "*headings*")
    out[:] = [c for c in out if not (isinstance(c, Bookend) and c.phrase.lower() in (hm.group(1).lower(), "none"))]


@builder("named_sections")
def _named_sections(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """Two or more named sections ("sections called Summary, Risks and Next steps")."""
    names = [n.strip(" \"'\u201c\u201d.") for n in re.split(r"\s*,\s*(?:and\s+|&\s+)?|\s+and\s+|\s*&\s*", m.group(1))]
    names = [n for n in names if n]
    if len(names) >= 2:
        out.append(Sections(tuple(names)))
        _drop(state, "*headings*")


@builder("distance_cap")
def _distance_cap(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    unit = m.group(2).rstrip("s")
    out.append(DistanceCap(float(m.group(1).replace(",", ".")) * _TO_KM.get(unit, 1.0)))
    _drop(state, "*domain*")


@builder("price_cap_after")
def _price_cap_after(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """A price cap with the limit after the amount; a nightly cap is about accommodation."""
    low = body.lower()
    per = m.group(2) or ""
    about = ["night", "hotel", "room", "accommodation", "apartment", "stay", "b&b", "hostel"] \
        if per == "night" or re.search(r"\b(accommodation|hotel|room|stay|lodging)", low) else [per] if per else []
    out.append(PriceCap(int(m.group(1).replace(",", "")), matcher(about) if about else None))


@builder("temperature")
def _temperature(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """Temperatures in one scale: the wanted one is asked for ("in Celsius"), or named without a negation before it."""
    low = body.lower()
    c_pos = re.search(r"(?:\bin|\buse|\bgive|\bwant)\s+(?:degrees\s+)?(?:\u00b0\s?c\b|celsius|centigrade)", low)
    f_pos = re.search(r"(?:\bin|\buse|\bgive|\bwant)\s+(?:degrees\s+)?(?:\u00b0\s?f\b|fahrenheit)", low)
    tm = re.search(r"\b(celsius|centigrade|fahrenheit)\b", low)
    if c_pos and not f_pos:
        tm = re.search(r"celsius|centigrade|\u00b0\s?c", low)
    elif f_pos and not c_pos:
        tm = re.search(r"fahrenheit|\u00b0\s?f", low)
    elif tm and re.search(rf"\b{_NEG}\b[^.;]*$", low[: tm.start()]):
        tm = None  # "no cups, ounces or Fahrenheit": the named unit is the unwanted one
    if not tm or re.search(rf"\b{_NEG}\b[^.]{{0,10}}\b(celsius|centigrade|fahrenheit)",
                           low[max(0, tm.start() - 12): tm.end()]):
        return
    if "f" in tm.group(0)[-1:] or tm.group(0) == "fahrenheit":
        out.append(Forbid("Celsius temperatures", Matcher((), (r"\d\s?\u00b0\s?C\b", r"\bdegrees? celsius\b",
                                                               r"\d\s?C\b(?=[,.;)\s])")), task_override=True,
                          ask="give temperatures in Fahrenheit"))
    else:
        out.append(Forbid("Fahrenheit temperatures", Matcher((), (r"\d\s?\u00b0\s?F\b", r"\bdegrees? fahrenheit\b",
                                                                  r"\bfahrenheit\b")), task_override=True,
                          ask="give temperatures in Celsius"))


@builder("list_ban")
def _list_ban(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Don't list the amenities": a ban on the things of a known list (amenities, facilities)."""
    np = m.group("np").strip()
    head = tx.stem(np.split()[-1]) if np.split() else ""
    lex = next((v for k, v in _LIST_LEX.items() if head.startswith(k)), ())
    if lex:
        out.append(Forbid(np, Matcher((), tuple(r"\b" + re.escape(x) + r"\b" for x in lex)), task_override=True,
                          ask=f"skip the {np}"))
        _drop(state, "*domain*")


@builder("spell_small_numbers")
def _spell_small_numbers(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    lim = m.group(1) or m.group(2) or "ten"
    n = {"ten": 10, "nine": 10, "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100}.get(lim)
    n = n if n is not None else (int(lim) if lim.isdigit() else 10)
    if re.search(r"\b(up to)\b", body.lower()):
        n += 1
    out.append(SpellSmallNumbers(n))


@builder("citation_comma")
def _citation_comma(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    low = body.lower()
    comma = "author, year" in low or "name, year" in low
    if re.search(r"\b(no|without) (a )?comma\b", low):
        comma = False
    out.append(CitationComma(comma))
    if not re.search(r"\b(support|back|include|add|provide|give|always cite|need|require)\w*\b", low):
        _drop(state, "sources")


@builder("substitute_tool")
def _substitute_tool(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """"Use X, not Y" for tools and libraries (units and currencies are other kinds)."""
    if re.search(r"\b(units?|metric|imperial|celsius|fahrenheit|euros?|dollars?|pounds?|km|miles?)\b", m.group(0)) or \
            m.group("x") in _STOPWORDS or m.group("y") in _STOPWORDS:
        return
    out.append(Substitute(m.group("x"), m.group("y")))
    _drop(state, f"*forbid-containing:{m.group('y')}*")


@builder("concepts")
def _concepts(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """Chart types to avoid (dual axes, pie charts, 3-D plots) named after a negation."""
    low = body.lower()
    for concept, rxs in _CONCEPTS.items():
        mm = re.search(concept, low)
        if mm and re.search(rf"\b{_NEG}\b[^.]{{0,30}}$", low[: mm.start()]):
            out.append(Forbid(mm.group(0), Matcher((), rxs), where="any", task_override=True, ask=f"no {mm.group(0)}"))
            _drop(state, f"*forbid-containing:{mm.group(0).split()[0]}*")


def _identifier_use(ident: str) -> str:
    """A use of a banned identifier in code: a method (``.append``) when called, a qualified name
    (``Obj.magic``, ``fmt.Println``) wherever it stands as a whole name, called with parentheses or, as in
    OCaml and Haskell, without (``Obj.magic x``)."""
    if ident.startswith("."):
        return re.escape(ident) + r"\s*\("
    return r"(?<![\w.])" + re.escape(ident) + r"(?![\w])"


@builder("code_identifier")
def _code_identifier(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """A code identifier that must not be left in code (fmt.Println, console.log ...); after "not"/"instead of"
    the identifier is the banned one ("use logging.getLogger(), not print()")."""
    text = state["text"]
    low = text.lower().replace("\u2019", "'")
    pref_m = re.search(r"\b(?:use|prefer|go with|stick to)\b(?:[^.;]|\.(?=\w)){0,80}?(?:,\s*)?\b(?:not|instead of|rather than|"
                       r"over)\s+`?([A-Za-z_][\w.]*)\(\)?`?", text)
    if pref_m:
        text = text[pref_m.start(1) - 1:] if pref_m.start(1) > 0 else text
    ids = re.findall(r"`?\b([A-Za-z_]\w*\.[A-Za-z_]\w*)(?:\(\))?`?", text)
    ids += [f".{x}" for x in re.findall(r"(?<![\w])\.([A-Za-z_]\w*)\(\)", text)]
    if pref_m and not ids:
        ids = [pref_m.group(1)]
    elif not pref_m:  # an identifier in an example of what to do instead ("reassign: df = df.dropna()") is not banned
        ids = [i for i in ids if re.search(rf"\b{_NEG}\b[^.;]{{0,30}}" + re.escape(i), text, re.I) or
               re.search(r"\b(remove|strip|left|take out|get rid of|clean out|delete)\b[^.;]{0,30}" + re.escape(i), text, re.I)]
    ids = [i for i in ids if not re.match(r"(e\.g|i\.e|etc|vs)\b", i, re.I) and not re.search(
        r"\.(py|js|ts|tsx|jsx|go|md|txt|json|ya?ml|csv|toml|xml|kts?|gradle|html?|css|scss|lock|cfg|ini|env|sh|sql|rb|"
        r"java|swift|tex|ipynb|pdf|docx?|xlsx?|png|svg)$", i, re.I)]
    if ids and re.search(rf"\b{_NEG}\b|\bremove\b|\bstrip\b|\bleft\b|\btake out\b|\bget rid of\b|\bclean out\b|\bdelete\b",
                         low) and not any(isinstance(c, WrapErrors) for c in out):
        out.append(Forbid(ids[0], Matcher((), (_identifier_use(ids[0]),)),
                          where="code", task_override=False, ask=f"remove the {ids[0]} calls"))
        _drop(state, f"*forbid-containing:{ids[0].split('.')[0].lower()}*")


@builder("max_marks")
def _max_marks(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    label, rx = _COUNTED[m.group(2)]
    n = _number(m.group(1).replace("a single", "one").replace("single", "one"))
    if n is not None:
        out.append(MaxMarks(label, rx, n))
        _drop(state, f"*forbid:{label}*")


@builder("code_languages")
def _code_languages(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    langs = named_languages(state["text"])
    if langs:
        out.append(CodeLanguages(langs))


@builder("file_naming")
def _file_naming(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """Where saved files go and how they are named, from an example file name and a folder."""
    text = state["text"]
    low = text.lower().replace("\u2019", "'")
    exs = list(re.finditer(r"(?<![\w/])((?:[\w.-]+/)*[\w<>{}\[\].-]*[A-Za-z0-9>\]}]\.(md|txt|csv|json|ya?ml|py|ipynb|tex|"
                           r"docx?|pdf|png|svg))\b", text))
    good = [e for e in exs if not re.search(r"\b(?:not|no|never|avoid|don't|do not|nothing)\b",
                                             text[max(text.rfind(". ", 0, e.start()), text.rfind("; ", 0, e.start()), 0):
                                                  e.start()], re.I)]
    ex = good[-1] if good else None  # the concrete example usually comes last ("..., e.g. okafor-2023-adapters.md")
    folder = re.search(r"\b(?:in|into|under|to|live in|lives in|go in|goes in)\s+(?:the\s+)?`?((?:[\w.-]+/)+)`?", text)
    if not (ex or folder) or not re.search(
            r"\b(sav\w*|nam\w*|file ?names?|files? (?:go|live)|put (?:it|them)|store (?:it|them))\b|"
            r"\b(?:notes?|specs?|charts?|plots?|figures?|drafts?|reports?|documents?|files?|pdfs?|"
            r"pngs?)\s+(?:\w+\s+)?(?:live|go|belong)s?\s+in\b", low) or re.search(rf"\b{_NEG}\b[^.]{{0,12}}\b(sav|nam)", low):
        return
    ext = ex.group(2) if ex else ""
    pattern = _name_pattern(ex.group(1)) if ex and re.search(r"\b(nam\w*|start\w* (?:the|with)|date first|like|e\.g\.|"
                                                              r"format)\b", low) else ""
    fold = folder.group(1) if folder else (ex.group(1).rsplit("/", 1)[0] + "/" if ex and "/" in ex.group(1) else "")
    if ex and (fold or pattern):
        out.append(FileNaming(fold, pattern, ext, ex.group(1).rsplit("/", 1)[-1] if ex else fold))
        _drop(state, "*domain*", "*forbid-containing:yyyy*")
        out[:] = [c for c in out if not isinstance(c, DateFormat)]


@builder("require_literal")
def _require_literal(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """Literal lines a kind of file must hold ("Bash scripts need #!/usr/bin/env bash and set -euo pipefail")."""
    text = state["text"]
    low = text.lower().replace("\u2019", "'")
    kinds_named = tuple(dict.fromkeys(e for k, v in _LITERAL_KINDS.items() if re.search(rf"\b{k}\b", low) for e in v))
    lits = re.findall(r"(#!/\S+(?: \w+)?|set -[a-z]+(?: pipefail)?|\bUSER\b(?= line| instruction| directive))", text)
    if kinds_named and lits and not re.search(rf"\b{_NEG}\b[^.]{{0,20}}(?:#!|set -|USER)", text):
        out.append(RequireLiteral(tuple(dict.fromkeys(lits)), kinds_named))
        _drop(state, "*domain*")


@builder("protected_paths")
def _protected_paths(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    for path in protected_paths(state["text"]):
        out.append(ProtectedPath(path))
        _drop(state, "*actions*")


@builder("min_mentions")
def _min_mentions(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    if tx.parse_number(m.group(1)) is not None and m.group(2) not in _STOPWORDS:
        out.append(MinMentions(m.group(2), int(tx.parse_number(m.group(1)))))


def _brackets(low: str) -> str:
    return r"\(" if re.search(r"\b(brackets?|parenthes[ie]s)\b", low) else ""


@builder("metric_or_imperial")
def _metric_or_imperial(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """Metric wanted (imperial banned) or imperial wanted (metric banned), unless the named system is negated."""
    low = body.lower()
    if re.search(r"\b(?:in|use|using|stick to|only) (?:\w+ and )?(kilomet\w+|km|metric|metres|meters|kilograms|kg|centimet\w+|"
                 r"cm|millimet\w+|mm|grams|g|millilit\w+|ml|lit\w+)\b|\bmin/km\b|\bmetric\b", low) and \
            not re.search(rf"\b{_NEG}\b[^.]{{0,10}}\b(metric|kilomet|km)", low):
        out.append(Forbid("imperial units", Matcher((), _IMPERIAL), where="reply", task_override=True,
                          ask="use metric units", skip_before=_brackets(low)))
        _drop(state, "*domain*")
    elif re.search(r"\bin (miles|imperial|feet|inches|pounds|lbs)\b|\bmin/mi(le)?\b|\bimperial\b", low) and \
            not re.search(rf"\b{_NEG}\b[^.]{{0,10}}\b(imperial|miles)", low):
        out.append(Forbid("metric units", Matcher((), _METRIC), where="reply", task_override=True,
                          ask="use imperial units"))
        _drop(state, "*domain*")


@builder("us_units")
def _us_units(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """US or imperial units wanted; things the rule says metric is fine for are skipped."""
    low = body.lower()
    out[:] = [c for c in out if not isinstance(c, Units)]
    fine = re.search(r"\b(?:are|is)\s+(?:fine|ok|okay)\s+for\s+([\w ,]+?)(?:[.;]|$)", low)
    items = [x for x in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+", fine.group(1)) if x] if fine else []
    out.append(Forbid("metric units", Matcher((), _METRIC), where="reply", task_override=True, ask="use US units",
                      skip_before=_brackets(low),
                      skip_after=r"\b(?:" + "|".join(re.escape(x.strip()) for x in items) + r")\b" if items else ""))
    _drop(state, "*domain*")


@builder("metric_list")
def _metric_list(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """Two or more metric units named ("Grams, millilitres and °C please")."""
    low = body.lower()
    units = re.findall(r"\b(grams|millilit\w+|ml|kilograms|kg|litres|liters|celsius|centimet\w+|cm|kilomet\w+|km|metres|meters)"
                       r"\b|\u00b0c\b", low)
    if len(units) >= 2 and not any(isinstance(c, Forbid) and c.label == "imperial units" for c in out):
        out.append(Forbid("imperial units", Matcher((), _IMPERIAL), where="reply", task_override=True, ask="use metric units",
                          skip_before=_brackets(low)))
        _drop(state, "*domain*")


@builder("gluten")
def _gluten(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    from toolkit.compliance import _lexicons as lx

    words = tuple(dict.fromkeys(lx.DOMAIN["gluten"] + ("wheat", "barley", "rye", "couscous", "semolina", "bulgur",
                                                       "seitan", "noodles", "tortilla", "croutons", "pastry")))
    pats = tuple(rf"(?<!gluten-free )(?<!gluten free )(?<!gf )\b{re.escape(w)}\w*\b(?![^.,;\n]{{0,30}}gluten[- ]free)"
                 for w in words)
    out.append(Forbid("gluten", Matcher((), pats), task_override=True, ask="keep it gluten-free"))
    _drop(state, "*domain*")


@builder("red_eye")
def _red_eye(body: str, m: re.Match, out: list[Check], state: dict) -> None:
    """Overnight flights banned where the rule names their clock window: departures inside it."""
    win = re.search(r"\b(?:between|from)\s+(\d{1,2})(?:[:.h]\d\d)?\s*(?:and|-|\u2013|to)\s*(\d{1,2})(?:[:.h]\d\d)?", body.lower())
    a, b = int(win.group(1)) % 24, int(win.group(2)) % 24
    hours = [h for h in range(24) if (h >= a or h < b) if a > b] or list(range(a, b))
    hx = "|".join(sorted({f"{h:02d}" for h in hours} | {str(h) for h in hours}, key=len, reverse=True))
    pm = "|".join(str(h - 12) for h in hours if 13 <= h <= 23)
    am = "|".join(["12"] * (0 in hours) + [str(h) for h in hours if 1 <= h <= 11])
    lead = r"\b(?:depart\w*|leav\w*|dep\.?|takes? off|out)\s+(?:[\w()-]+\s+){0,3}?(?:at\s+)?"
    rxs = [lead + rf"(?:{hx})[:.h][0-5]\d\b(?!\s?(?:am|pm|a\.m|p\.m))"]
    rxs += [lead + rf"(?:{pm})(?:[:.][0-5]\d)?\s?(?:pm|p\.m\.)"] if pm else []
    rxs += [lead + rf"(?:{am})(?:[:.][0-5]\d)?\s?(?:am|a\.m\.)"] if am else []
    out.append(Forbid("red-eye flights", Matcher((), tuple(rxs)), task_override=True,
                      ask="find a flight that leaves in the daytime"))
