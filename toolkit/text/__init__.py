"""The one shared text layer: tokens with offsets, one stemmer, sentences, lists, quotes, numbers,
negation windows. Every offline reader (admission, resolution, the compliance reader, drift) uses
this module instead of its own tokenizer, stemmer or negation list.

Modules behind this surface are private (`_tokens.py`, ...); import from `toolkit.text`.
"""

from toolkit.text._context import (  # noqa: F401,E402
    Clause,
    ContextRule,
    Modifier,
    clauses,
    context_rules,
    find_modifiers,
    modifiers_at,
    negated,
    split_rule,
    word_modifiers,
)
from toolkit.text._tables import Entry, Table, load_table, table_names  # noqa: F401
from toolkit.text._tokens import *  # noqa: F403
from toolkit.text._tokens import (  # noqa: F401
    Token,
    bullet_lines,
    code_blocks,
    find_phrase,
    free_suffix,
    heading_lines,
    is_question,
    lexicon_spans,
    negated_at,
    nonempty_lines,
    numbered_lines,
    parse_number,
    prose,
    prose_word_count,
    replace_spans,
    sentences,
    snippet,
    stem,
    stems_of,
    tokens,
    unseen_spans,
    word_zipf,
    words,
)
