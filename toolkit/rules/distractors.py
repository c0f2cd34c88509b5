"""Realistic distractor rules for growing a case's library to 2/47/197/497 rules.

A grammar of coding-assistant preferences (domain base rules x applicability variants) gives a
pool of several hundred distinct rules. For each case, a third of the distractors are the pool
rules most related to the case's own rules (same domain words), the rest are drawn at random;
near-duplicates of the case's rules or of the correction are left out so the labelled update
stays the right answer. Everything is seeded per (seed, case, size, order).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from toolkit._seeding import item_rng
from toolkit.records import ResolutionInput, Rule
from toolkit.rules.rule_index import _terms, overlap, rule_text

SIZES: tuple[int, ...] = (2, 47, 197, 497)

#: domain -> base requirements (our own wording of common coding-assistant preferences)
BASE_RULES: dict[str, tuple[str, ...]] = {
    "testing": (
        "Write a regression test for every bug fix",
        "Keep unit tests free of network access",
        "Use parametrized tests for tables of inputs",
        "Name test functions after the behaviour they check",
        "Freeze the clock in time-dependent tests",
        "Never delete a failing test to make the suite pass",
    ),
    "test-runs": (
        "Run only the affected tests while iterating",
        "Report the number of passing and failing tests at the end",
        "Rerun flaky tests once before reporting a failure",
        "Run the smoke tests before deploying",
    ),
    "commits": (
        "Reference the ticket number in the commit body",
        "Keep each commit focused on one logical change",
        "Sign off every commit",
        "Do not commit generated build artifacts",
        "Write commit bodies that explain why, not what",
    ),
    "branches": (
        "Create a feature branch for each task",
        "Never push directly to the release branch",
        "Delete merged branches on the remote",
        "Prefix branch names with the ticket id",
    ),
    "pull-requests": (
        "Keep pull requests under 400 changed lines",
        "Add screenshots to pull requests that change the UI",
        "Request a review from the code owner",
        "List breaking changes in the pull request description",
    ),
    "python-style": (
        "Use dataclasses for plain data containers",
        "Prefer list comprehensions over map and filter",
        "Avoid mutable default arguments",
        "Use enum classes instead of string constants",
        "Keep module-level code free of side effects",
        "Use keyword arguments for boolean parameters",
    ),
    "js-style": (
        "Use const unless a variable is reassigned",
        "Prefer async/await over promise chains",
        "Use strict equality in comparisons",
        "Avoid default exports in TypeScript modules",
        "Keep React components under 200 lines",
    ),
    "naming": (
        "Use verbs for function names",
        "Prefix private helpers with an underscore",
        "Name boolean variables as questions, like is_ready",
        "Avoid single-letter names outside short loops",
        "Use plural names for collections",
    ),
    "errors": (
        "Never swallow exceptions silently",
        "Raise specific exception classes, not bare Exception",
        "Include the offending value in error messages",
        "Retry network calls with exponential backoff",
        "Return early on invalid input",
    ),
    "logging": (
        "Log at warning level when falling back to a default",
        "Use structured JSON logs in services",
        "Do not log full request bodies",
        "Add a correlation id to every log line",
    ),
    "docs": (
        "Update the README when a command-line flag changes",
        "Document every environment variable the service reads",
        "Keep a usage example at the top of each module docstring",
        "Write architecture decisions down in docs/adr",
        "Link to the issue tracker from the README",
    ),
    "comments": (
        "Explain workarounds with a link to the upstream issue",
        "Remove commented-out code before finishing",
        "Mark unfinished work with TODO and an owner",
        "Keep comments in sync with the code they describe",
    ),
    "dependencies": (
        "Check the licence of any new third-party package",
        "Prefer well-maintained packages with recent releases",
        "Keep development dependencies separate from runtime ones",
        "Remove unused dependencies from the manifest",
        "Update the lockfile in the same commit as the manifest",
    ),
    "security": (
        "Never hard-code credentials",
        "Validate user input at the API boundary",
        "Use parameterized SQL queries",
        "Store secrets in the vault, not in config files",
        "Redact tokens from error reports",
    ),
    "database": (
        "Make every migration reversible",
        "Add an index for each new foreign key",
        "Never run destructive migrations without a backup",
        "Use transactions for multi-step writes",
    ),
    "performance": (
        "Avoid N+1 queries in list endpoints",
        "Cache expensive lookups with an explicit expiry",
        "Stream large files instead of loading them into memory",
        "Measure before optimising and report the numbers",
    ),
    "formatting": (
        "End every file with a single newline",
        "Remove trailing whitespace",
        "Sort dictionary keys in fixtures",
        "Use one blank line between methods",
    ),
    "output": (
        "Start answers with the direct result, then the details",
        "Show file paths relative to the repository root",
        "Use numbered steps for procedures",
        "Quote exact error messages in code blocks",
        "Mention which files were changed at the end",
        "Avoid marketing language in explanations",
    ),
    "workflow": (
        "Read the existing code before proposing a rewrite",
        "Ask which environment to target when it is unclear",
        "Say so when a requirement cannot be met",
        "Keep a scratch file out of the repository",
        "Summarise the plan before large edits",
        "Do not change unrelated files",
    ),
    "shell": (
        "Quote variables in shell scripts",
        "Use set -euo pipefail in bash scripts",
        "Prefer long option names in scripts",
        "Avoid sudo in setup instructions",
    ),
    "ci": (
        "Keep CI jobs under ten minutes",
        "Cache dependencies between CI runs",
        "Fail the build on new compiler warnings",
        "Pin CI runner images to a version",
    ),
    "config": (
        "Keep configuration in environment variables",
        "Provide defaults for every optional setting",
        "Validate the configuration file at startup",
        "Keep example config files up to date",
    ),
    "api": (
        "Version public HTTP endpoints",
        "Return problem-details JSON for errors",
        "Use ISO 8601 timestamps in API responses",
        "Paginate list endpoints",
    ),
    "frontend": (
        "Use CSS modules for component styles",
        "Give every image an alt text",
        "Keep colours in the design tokens file",
        "Lazy-load routes that are rarely visited",
    ),
    "data": (
        "Write intermediate data as parquet, not CSV",
        "Set random seeds in experiment scripts",
        "Record the data version with every result",
        "Keep notebooks free of hidden state",
    ),
}

_CONDITIONS: tuple[str, ...] = (
    "when touching the payment code",
    "when the change affects the public API",
    "when working on the mobile client",
    "when a file is longer than 300 lines",
    "during a release freeze",
    "when editing infrastructure code",
    "when the task mentions performance",
    "when writing database code",
)
_EXCEPTIONS: tuple[str, ...] = (
    "generated code",
    "prototype branches",
    "one-off scripts",
    "vendored packages",
    "hotfixes",
    "internal tools",
)
_PROJECTS: tuple[str, ...] = ("atlas", "billing-api", "web-ui", "ingest", "docs-site", "ml-lab")


def distractor_pool() -> list[Rule]:
    """Every distractor the grammar yields: each base rule plain, conditioned, excepted, scoped
    (built once per process; each call returns a new list of the same rules)."""
    return list(_pool())


@cache
def _pool() -> tuple[Rule, ...]:
    pool: list[Rule] = []
    n = 0
    for d_i, (_, bases) in enumerate(BASE_RULES.items()):
        for b_i, base in enumerate(bases):
            k = d_i * 7 + b_i
            variants = [
                Rule(id="_", behavior=base),
                Rule(id="_", behavior=base, conditions=[_CONDITIONS[k % len(_CONDITIONS)]]),
                Rule(id="_", behavior=base, exceptions=[_EXCEPTIONS[k % len(_EXCEPTIONS)]]),
                Rule(id="_", behavior=base, scope=f"project:{_PROJECTS[k % len(_PROJECTS)]}"),
                Rule(
                    id="_",
                    behavior=base,
                    scope=f"project:{_PROJECTS[(k + 3) % len(_PROJECTS)]}",
                    conditions=[_CONDITIONS[(k + 5) % len(_CONDITIONS)]],
                ),
            ]
            for v in variants:
                n += 1
                pool.append(v.model_copy(update={"id": f"dx{n:03d}"}))
    return tuple(pool)


@cache
def _background_weights():  # noqa: ANN202 - a TermWeights
    """The background term weights (no library): built once, not once per pool rule."""
    from toolkit.rules.rule_index import TermWeights

    return TermWeights.for_rules([])


def _too_close(rule: Rule, record: ResolutionInput, own: Sequence[str] | None = None) -> bool:
    """A pool rule that restates the case's rules or the correction is not a distractor
    (``own``: the texts of the case's rules, when the caller has them already)."""
    w = _background_weights()
    text = rule_text(rule)
    own = [rule_text(r) for r in record.library] if own is None else own
    return overlap(record.correction, text, w) >= 0.4 or any(
        overlap(t, text, w) >= 0.5 for t in own
    )


#: per pool (by identity; the pool is kept so its id is not reused): its rules' term sets and an
#: inverted index term -> positions of the pool rules holding it
_POOL_INDEX: dict[int, tuple[Sequence[Rule], dict[str, list[int]]]] = {}


def _pool_index(pool: Sequence[Rule]) -> dict[str, list[int]]:
    """Term -> positions in ``pool`` of the rules whose text holds it (built once per pool)."""
    hit = _POOL_INDEX.get(id(pool))
    if hit is not None and hit[0] is pool:
        return hit[1]
    if len(_POOL_INDEX) >= 16:  # pools made per call (tests) are not kept for ever
        _POOL_INDEX.clear()
        _ELIGIBLE.clear()
    inv: dict[str, list[int]] = {}
    for i, p in enumerate(pool):
        for t in _terms(rule_text(p)):
            inv.setdefault(t, []).append(i)
    _POOL_INDEX[id(pool)] = (pool, inv)
    return inv


def _sharing(pool: Sequence[Rule], texts: Sequence[str]) -> set[int]:
    """Positions of the pool rules that share at least one term with one of ``texts``: every
    other rule's overlap with them is exactly 0 (:func:`overlap` needs a shared term)."""
    inv = _pool_index(pool)
    return {i for t in texts for term in _terms(t) for i in inv.get(term, ())}


#: (pool id, correction, the case's rules) -> (eligible pool rules, the same ranked by relatedness)
_ELIGIBLE: dict[tuple, tuple[list[Rule], list[Rule]]] = {}


def _eligible(record: ResolutionInput, full: Sequence[Rule]) -> tuple[list[Rule], list[Rule]]:
    """The pool rules that may join ``record``'s library (not too close to it, not its own ids),
    in pool order and ranked by overlap with the case (most related first, ties by id).

    Neither depends on the size or the order a library is grown to, so they are memoised per case
    (the growth table grows each case to 4 sizes in 3 orders). Only the pool rules sharing a term
    with the correction or the case's rules are compared: every other rule overlaps 0, so it is
    neither too close nor related (the same libraries, without ~600 overlaps per case)."""
    own = list(record.library)
    own_texts = [rule_text(r) for r in own]
    key = (id(full), record.correction, tuple((r.id, t) for r, t in zip(own, own_texts,
                                                                       strict=True)))
    hit = _ELIGIBLE.get(key)
    if hit is not None and _POOL_INDEX.get(id(full), (None,))[0] is full:
        return hit
    near = _sharing(full, [record.correction, *own_texts])
    pool = [p for i, p in enumerate(full) if i not in near or not _too_close(p, record, own_texts)]
    taken = {r.id for r in own}
    pool = [p for p in pool if p.id not in taken]
    query = " ".join([record.correction, *own_texts])
    shares = _terms(query)
    ranked = sorted(pool, key=lambda p: (-overlap(query, rule_text(p))
                                         if shares & _terms(rule_text(p)) else 0.0, p.id))
    if len(_ELIGIBLE) > 4096:
        _ELIGIBLE.clear()
    _ELIGIBLE[key] = (pool, ranked)
    return pool, ranked


def grow_library(
    record: ResolutionInput,
    size: int,
    order: int,
    *,
    seed: int = 0,
    pool: Sequence[Rule] | None = None,
) -> ResolutionInput:
    """``record`` with its library grown to ``size`` rules by related and random distractors,
    shuffled by ``order``."""
    own = list(record.library)
    need = max(0, size - len(own))
    pool, ranked = _eligible(record, pool or distractor_pool())
    if need > len(pool):
        raise ValueError(f"only {len(pool)} distractors available for {record.id}, need {need}")
    rng = item_rng(seed, record.id, size, order)
    related_n = need // 3
    related = ranked[:related_n]
    related_ids = {p.id for p in related}  # pool ids are unique; comparing by id, not by value
    rest = [p for p in pool if p.id not in related_ids]
    picks = [rest[i] for i in rng.permutation(len(rest))[: need - related_n]]
    lib = own + related + picks
    lib = [lib[i] for i in rng.permutation(len(lib))]
    return record.model_copy(update={"library": lib})
