"""A cue grammar for corrections: duration, scope, activation, exceptions, vagueness, friction.

:func:`parse_cues` reads one user message and returns a frozen :class:`Cues`. It is the shared,
model-free reading of a correction used by admission (issue 4) and resolution (issue 5); the
field names are a stable interface (fields may be added, never renamed or removed).

Every span the grammar relies on is returned in ``Cues.quotes`` as an exact substring of the
message, so downstream decisions can always be grounded in the user's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

__all__ = ["Cues", "parse_cues", "Span"]

_F = re.IGNORECASE

# -- lexicons (regular expressions over the raw message) --------------------------------------
_TASK_NOUNS = (
    r"(?:task|change|changeset|change ?set|pr|pull request|mr|merge request|commit|ticket|issue|"
    r"bug|bugfix|fix|hotfix|patch|diff|branch|feature|refactor(?:ing)?|migration|release|run|"
    r"session|request|story|sprint|iteration|assignment|job|one|case|instance|edit|update|"
    r"version|draft|round|attempt|delivery|submission|review|deploy(?:ment)?|rollout|spike|"
    r"experiment|prototype|demo|pass|cleanup|clean-up|rewrite|upgrade|port|ask|exercise|work item)"
)
_PROJECT_NOUNS = (
    r"(?:project|repo|repository|codebase|code base|code-base|monorepo|mono-repo|workspace|"
    r"service|package|library|app|application|crate)"
)

_LASTING = [
    r"\bfrom now on(?:wards?)?\b|\bfrom here on(?: out)?\b|\bfrom this point (?:on|forward)\b",
    r"\bgoing forward\b",
    r"\bmoving forward\b",
    r"\bhenceforth\b",
    r"\bhereafter\b",
    r"\bin (?:the )?future\b",
    r"\bfor (?:all )?future\b",
    r"\bfuture (?:tasks?|work|changes?|PRs?|"
    r"sessions?|projects?|requests?|code)\b",
    r"\balways\b(?!-)",
    r"\bnever\b(?! mind)(?!-)",
    r",\s*ever\b",
    r"\bever again\b",
    r"\bnot ever\b",
    r"\bdon'?t ever\b",
    r"\bdo not ever\b",
    r"\bevery (?:single )?time\b",
    r"\beach time\b",
    r"\bany ?time\b",
    r"\bwhenever\b",
    r"\bin general\b",
    r"\bgenerally\b",
    r"(?:^|(?<=[.!?,;:]\s))ever\b(?=\s*[.!]|\s*$)",
    r"^(?:(?:general|standing|house|new|permanent|global) )?(?:rule|standard|policy|convention|"
    r"preference|principle|guideline|default)s?(?: (?:for you|from me))?\s*:",
    r"\b(?:in|for|across) (?:all|every|each|any) (?:(?:of )?(?:my|our|your|the) )?(?:output|outputs|"
    r"answers?|responses?|replies|messages?|code you write)\b",
    r"\bas a (?:general |standing |blanket )?(?:rule|habit|default)\b",
    r"\bby default\b",
    r"\bat all times\b",
    r"\bpermanently\b",
    r"\bfor good\b",
    r"\bas a matter of course\b",
    r"\bstanding (?:rule|instruction|order)\b",
    r"\bon (?:every|all|each) (?:\w+ ){0,2}(?:tasks?|changes?|commits?|prs?|pull requests?|"
    r"projects?|repos?|sessions?)\b",
    r"\b(?:for|in|across) (?:all|every|each|any) (?:(?:of )?(?:my|our|your|the) )?(?:future )?"
    r"(?:tasks?|changes?|commits?|prs?|pull requests?|projects?|repos?|repositories|sessions?|work|"
    r"code|codebases?)\b",
    r"\bremember (?:to|that|this)\b",
    r"\bkeep in mind\b",
    r"\bdon'?t forget (?:to|that)\b",
    r"\bmake (?:it|this|that) a (?:habit|rule|default)\b",
    r"\b(?:make|get (?:in|into)|be in) (?:a|the) habit of\b",
    r"\bhabitually\b",
    r"\bthe rule is\b",
    r"\bI (?:always|never) want\b",
    r"\bnext time\b",
    r"\bfrom today\b",
    r"\bevery(?:thing)? you\b",
    r"\bas a standard\b",
    r"\bstandard practice\b",
    r"\bfrom here on\b",
    r"\bpermanent(?:ly)?\b",
    r"\b(?:standing|general|lasting|blanket|house) (?:rule|instruction|policy|preference|convention)\b",
    r"\b(?:every|each|all) (?:new |future |single )?(?:tasks?|changes?|commits?|prs?|"
    r"pull requests?|projects?|repos?|sessions?)\b",
]
_FRICTION = [
    r"\bI (?:keep|kept) (?:having to |needing to )?(?:tell|telling|ask|asking|remind|reminding|"
    r"say|saying|repeat|repeating|correct|correcting|fix|fixing|mention|mentioning|point|pointing)"
    r"(?: (?:out|you|it|this|that|the same thing))*(?: (?:this|that|again))?\b",
    r"\bhow many times\b",
    r"\bhow often do I\b",
    r"\b(?:have|need) to (?:repeat|keep saying)\b",
    r"\bfor the (?:\w+ )?(?:hundredth|umpteenth|nth|tenth|fifth|third|"
    r"fourth|last|millionth|thousandth) time\b",
    r"\bI(?:'ve| have)? (?:already )?(?:told|asked|said|mentioned|reminded|explained) (?:you )?"
    r"(?:this |that |about this |about that )?(?:before|already|multiple times|many times|"
    r"several times|repeatedly|a (?:few|couple of|dozen|million) times|over and over|again)",
    r"\bagain and again\b",
    r"\bover and over\b",
    r"\byet again\b",
    r"\bonce again\b",
    r"\byou keep (?:on )?\w+ing\b",
    r"\byou (?:always|still|again|constantly|repeatedly) "
    r"(?:forget|forgot|miss|skip|leave|ignore|do|add|use|break)\w*\b",
    r"\brepeat(?:ing)? myself\b",
    r"\bas I(?:'ve| have)? (?:said|told you|mentioned) (?:before|"
    r"already|earlier)\b",
    r"\blike I (?:said|told you) (?:before|already)\b",
    r"\bevery single time\b",
    r"\bI shouldn'?t have to (?:keep|tell|remind|say)\b",
    r"\b(?:stop|quit) making me\b",
    r"\bI'?m tired of (?:telling|reminding|asking|saying)\b",
    r"\b(?:same|this) (?:mistake|thing|problem) (?:again|keeps)\b",
    r"\bkeeps? happening\b",
    r"\b(?:keep|kept) coming up\b",
    r"\bI'?m getting tired\b",
    r"\btired of (?:having|repeating)\b",
    r"\bnot the first time\b",
    r"\b(?:I|we) (?:\w+ ){0,3}keep (?:on )?(?:reminding|telling|asking|"
    r"repeating|saying|correcting|pointing out)\b",
    r"(?:^|(?<=[.!?]\s))(?:and )?again[,!.]? you\b",
    r"\bnot again\b",
    r"\byou (?:forgot|missed|ignored|skipped|did|left|broke|used|added) (?:\w+ ){0,4}again\b",
    r"\btime (?:I'?m|I am|I've|I have|that I'?ve) (?:telling|asking|"
    r"saying|reminding|told|asked|said|reminded|mentioned)\b",
    r"\bwhy do you (?:keep|always)\b",
    r"\bI (?:already|previously) (?:told|asked|said)\b",
    r"\b(?:this is|that'?s|it'?s|this'?s)(?: \w+)? (?:(?:the|my|your) )?(?:second|third|fourth|fifth|"
    r"sixth|tenth|\d+(?:st|nd|rd|th)|nth|umpteenth|hundredth|millionth|thousandth|same) time\b",
    r"\b(?:told|asked|said|mentioned|reminded|explained|corrected)(?: you)?(?: this| that| it)?"
    r"(?: \w+){0,3}? (?:times|(?:a )?(?:bunch|lot|ton|dozen|hundred) (?:of )?times)\b",
    r"\bagain with (?:the|this|that|these|those)\b",
    r"\bI(?:'ve| have) (?:already )?(?:said|told you|asked(?: you)?|mentioned|explained) (?:this|that|it)"
    r"(?=\s*(?:[:;!,\u2013\u2014-]|\.|$))",
    r"(?:^|(?<=[.!?]\s))(?:\w+[,.!]*\s+)?again\s*[?!]+",
    r"(?:^|(?<=[.!?]\s))(?:\w+[,.!]*\s+)?again,",
    r"\bwhy (?:do|did) I (?:have|need) to\b",
    r"(?<!first )(?<!last )(?<!next )\b(?:second|third|fourth|fifth|sixth|tenth|nth|umpteenth|"
    r"hundredth|millionth|thousandth|\d+(?:st|nd|rd|th)) time\b",
    r"\byou (?:did|made|do|are doing|'re doing) (?:the )?(?:exact )?same (?:thing|mistake)\b",
    r"\b(?:same|this) (?:thing|mistake) (?:as )?(?:yesterday|last time|before)\b",
    r"\bI'?m (?:\w+ ){0,2}(?:tired|sick) of (?:telling|reminding|asking|saying|repeating|having to|"
    r"correcting|fixing)\b",
    r"\blost count\b",
    r"\byou(?:'ve| have)? (?:already )?(?:ignored|forgotten|forgot|missed|skipped|dropped|broken) "
    r"(?:this|that|it|the same \w+)(?: \w+)? (?:already|before|again|twice|(?:\w+ )?times)\b",
    r"\b(?:told|asked|said|mentioned|reminded|ignored|forgot(?:ten)?) (?:\w+ ){0,3}?(?:twice|"
    r"thrice)\b",
    r"\b(?:so|too) many times\b",
]
_TEMPORARY = [
    r"\b(?:just |only )?this (?:one )?time\b",
    r"\bjust this once\b",
    r"\bthis once\b",
    r"\bfor now\b",
    r"\bfor the (?:moment|time being|time)\b(?! being\w)",
    r"\bright now\b",
    r"\btemporarily\b",
    r"(?<!from )\b(?:just |only )?today\b(?! on\b)",
    r"\bthis (?:week|sprint|iteration)\b",
    r"\b(?:a|as a) temporary (?:exception|measure|thing|fix|workaround|"
    r"change|hack)\b",
    r"\bfor today\b",
    r"\bthis (?:one )?round\b",
    r"(?<!not )\bjust here\b",
    r"(?<!not )\bonly here\b",
    r"\bjust for now\b",
    r"\bin this (?:one |particular )?(?:instance|case)\b",
    r"\b(?:for|in|on|with|within|to|during) (?:this|the current|the present|this particular|"
    r"this one|this specific) " + _TASK_NOUNS + r"\b(?: (?:only|alone))?",
    r"\bthis " + _TASK_NOUNS + r" (?:only|alone)\b",
    r"\bonly (?:for|in|on) this\b",
    r"\bjust (?:for|in|on) this\b",
    r"\buntil (?:further notice|we|I|the|this|it)\b",
    r"\b(?:the )?(?:rest|remainder|remaining part) of (?:this|the|today'?s?|the current) "
    + _TASK_NOUNS
    + r"?\b",
    r"\bnot (?:a|as a) (?:general |lasting |"
    r"permanent )?rule\b",
    r"\bone-?off\b",
    r"\b(?:does|do)n'?t (?:need to )?(?:make|turn) (?:it|this)"
    r" (?:into )?a (?:rule|habit)\b",
    r"\bnot (?:in )?general\b",
]
_VAGUE = [
    r"\bsometimes\b",
    r"\boccasionally\b",
    r"\bfrom time to time\b",
    r"\bevery (?:so often|now "
    r"and then)\b",
    r"\bnow and (?:then|again)\b",
    r"\bonce in a while\b",
    r"\bhere and there\b",
    r"\bat times\b",
    r"\bon occasion\b",
    r"\bwhen(?:ever)? (?:it|that|this) (?:seems|feels|looks|"
    r"sounds) (?:right|appropriate|useful|helpful|good|sensible|reasonable|needed|necessary|"
    r"worth(?:while)?|relevant|fitting|ok|okay|like a good idea)\b",
    r"\bif (?:it|that|this) (?:makes sense|seems|feels|looks|sounds)\b",
    r"\bwhen(?:ever)? (?:it|that|this) makes sense\b",
    r"\bwhere(?:ver)? (?:it|that|this) (?:seems|feels|looks|sounds|is) (?:\w+ )?(?:useful|helpful|"
    r"right|appropriate|sensible|reasonable|needed|necessary|worth(?:while| it)?|relevant|fitting)\b",
    r"\bin (?:some|certain|a few|various) (?:places|spots)\b",
    r"\bwhere (?:it|that|this) makes sense\b",
    r"\b(?:when|where|if|as) (?:appropriate|needed|necessary|relevant|suitable|sensible|"
    r"warranted|useful|helpful|applicable|fitting|reasonable|it fits)\b",
    r"\bwhere(?:ver)? (?:appropriate|needed|relevant|useful|helpful|sensible|possible|it helps|"
    r"it fits|it matters)\b",
    r"\bwhen(?:ever)? (?:it(?:'s| is) )?(?:useful|helpful|relevant|appropriate|sensible|"
    r"warranted|worth it|worthwhile|reasonable)\b",
    r"\b(?:if|when(?:ever)?|where(?:ver)?) you (?:think|feel|find|judge|believe|deem|reckon)\b",
    r"\b(?:use|at) your (?:own )?(?:judg(?:e)?ment|discretion)\b",
    r"\bdepending on (?:the )?(?:situation|context|circumstances|case)\b",
    r"\bin (?:some|certain) (?:cases|situations|circumstances|contexts)\b",
    r"\bwhen(?:ever)? (?:it|that|this) (?:matters|helps|is worth it|counts|fits)\b",
    r"\bif you feel like it\b",
    r"\bwhen you get (?:a|the) chance\b",
    r"\bat some point\b",
    r"\b(?:when|if) (?:the )?(?:situation|context|moment) (?:calls for it|requires|is right)\b",
    r"\bwhen (?:the time is right|it counts)\b",
    r"\bevery once in a while\b",
    r"\bif (?:it'?s|it is) (?:worth it|useful|helpful|a good idea|appropriate|relevant|needed|"
    r"necessary|reasonable|sensible)\b",
    r"\b(?:if|when) (?:it|that) (?:seems|feels) (?:\w+ ?)+?\b",
    r"\bwhen(?:ever)? (?:it(?:'s| is)|things are) (?:a good (?:time|idea|fit)|the right time)\b",
    r"\bin the right (?:cases|situations|"
    r"circumstances|spots?|places?)\b",
    r"\bin the appropriate\b",
    r"\bthe right (?:moment|time)\b",
    r"\bwhen (?:it is|it's) called for\b",
    r"\bas you see fit\b",
    r"\bif you see fit\b",
    r"\bif (?:time|it) permits\b",
    r"\bif you have (?:the )?time\b",
    r"\bif (?:it'?s )?convenient\b",
    r"\bwhen(?:ever)? (?:it'?s )?convenient\b",
    r"\bwhen(?:ever)? you have (?:a moment|time|the time)\b",
]
# hedges on commitment (not on activation): vague alone, but a firm lasting cue outweighs them
# ("it'd be great if you always added tests from now on" is a politely worded lasting rule)
_HEDGE = [
    r"\bmaybe\b",
    r"\bperhaps\b",
    r"\b(?:might|could) (?:want to|help|be (?:nice|good|worth|"
    r"helpful|useful))\b",
    r"\b(?:it )?(?:would|'d) be (?:nice|good|great|helpful|welcome|"
    r"appreciated|lovely|cool)\b",
    r"\bif you (?:want|like|wish|prefer)\b(?! me\b)",
    r"\bfeel free to\b",
    r"\bideally\b",
]
# lasting cues too weak to outweigh a hedge ("would be nice in general")
_WEAK_LASTING = re.compile(
    r"(?i)^(?:in general|generally|remember (?:to|that|this)|keep in mind|"
    r"don'?t forget (?:to|that)|next time)$"
)
_COMPLETION = [
    r"\b(?:when(?:ever)?|once|after|as soon as) (?:you(?:'re| are| have|'ve)|it(?:'s| is)|that(?:'s| "
    r"is)|this(?:'s| is)|we(?:'re| are))(?: \w+)? (?:done|finished|ready|through|complete|merged)\b"
    r"(?! with (?:a|an|any|each|every)\b)",
]
# firm duration phrases (stronger than always/never): they lift a rule out of the current artefact
_FIRM_DURATION = re.compile(
    r"(?i)\b(?:from now on|from here on|going forward|moving forward|henceforth|hereafter|"
    r"in (?:the )?future|for (?:all )?future|permanent(?:ly)?|for good|from today|standing)\b"
)
# an instruction confined to one artefact at hand ("in this function", "throughout that file")
_ARTEFACT_SCOPE = (
    r"\b(?:in|within|throughout|across|inside|for) (?:this|that) (?:whole |entire )?(?:file|function|"
    r"method|class|module|script|snippet|component|notebook|test|endpoint|handler|query|loop|"
    r"diff|patch|block)\b"
)
_RETRACTION = [
    r"\bstop doing\b",
    r"\b(?:you can|feel free to|please) stop\b",
    r"\bno longer\b",
    r"\banymore\b",
    r"\bany more\b(?= *[.!,;]|$)",
    r"\bforget (?:about )?(?:the|that|my|this) "
    r"(?:earlier |old |previous )?(?:rule|preference|instruction|request)\b",
    r"\b(?:drop|scrap|remove|delete|cancel|retract|undo|lift) (?:the|that|my|this) (?:earlier |old |"
    r"previous )?(?:rule|preference|instruction|requirement)\b",
    r"\b(?:ignore|disregard) (?:what I said|my (?:earlier|previous|old))\b",
    r"\bnot (?:necessary|needed|required) any ?more\b",
    r"\bthat rule (?:is|no longer)\b",
]
_PREFERENCE = [
    r"\bI(?: \w+ly| also| only| always| much| never| really| exclusively| strictly)* "
    r"(?:prefer|like|love|enjoy|dislike|hate|detest|loathe|avoid|can'?t (?:stand|tolerate|handle|"
    r"eat|drink|have|do)|cannot (?:stand|tolerate|handle|eat|drink|have|do)|"
    r"refuse|believe|value|favou?r|adore|despise|want|wish|insist|stick to|stay away|thrive|"
    r"learn best|work best|follow|adhere|eat|read|listen|watch|dine|book|travel|use|shop|"
    r"prioriti[sz]e|require|need|steer clear|buy|wear|drive|will only|will not|won'?t|"
    r"(?:do not|don'?t|never) (?:like|want|enjoy|care for|eat|drink|use|watch|read|play|listen|"
    r"wear|buy|support|trust|go|consume))\b",
    r"\bI(?:'m| am)(?: \w+ly| very| really| quite| so| extremely| highly)? (?:a |an )?(?:vegan|vegetarian|allergic|lactose|gluten|not a fan|"
    r"a (?:big |huge )?fan|into|afraid|scared|terrified|sensitive|intolerant|on a|trying to|against|"
    r"more of|uncomfortable|passionate|committed|opposed|averse|uninterested|fascinated|"
    r"not (?:a fan|into|comfortable|keen|interested)|an? (?:\w+ )?(?:vegan|advocate|enthusiast|"
    r"environmentalist|fan|lover))\b",
    r"\bI have (?:a |an |no )?(?:[\w-]+ ){0,5}?(?:aversion|phobia|allergy|allergies|preference|"
    r"dislike|fear|intolerance|distaste|policy|rule|habit|condition|disease|stance|need|interest|"
    r"disdain|objection|tolerance|bias|issues|anxiety|disability|skin)\b",
    r"\bI (?:find|consider) (?:[\w'-]+ ){1,8}?(?:ineffective|distracting|boring|tedious|hard|"
    r"difficult|confusing|unengaging|disorienting|annoying|useless|overwhelming|stressful|"
    r"uncomfortable|too \w+|(?:un|dis)\w+ing|off-putting|unpleasant|unappealing|\w+ive|"
    r"\w+ful|\w+less|\w+ous)\b",
    r"\bI (?:get|feel|become) (?:\w+ )?(?:uncomfortable|anxious|nauseous|sick|overwhelmed|"
    r"stressed)\b",
    r"\bmy (?:preference|rule|style|taste)\b",
    r"\bI want (?:my|all|every|things)\b",
    r"\bI(?:'d| would) (?:rather|prefer)\b",
    r"\bI (?:only|never|always|usually|mostly|tend to|try to|can only|cannot|can'?t)\b",
]
# references to the artefact being delivered right now ("the function you just wrote")
_DEICTIC = [
    r"\byou (?:just|already) (?:\w+ed|wrote|made|sent|gave|did|built|ran|took|put|left|got)\b",
    r"\b(?:the|that|this) (?:\w+ ){0,3}you (?:\w+ed|wrote|made|sent|gave|did|built|ran|opened)\b",
    r"\byour (?:last|latest|previous|most recent) \w+",
    r"\b(?:the )?(?:snippet|code|diff|reply|answer|"
    r"output|patch|summary) above\b",
    r"\bthat last\b",
    r"\b(?:in|on|to|from) (?:this|that) (?:file|function|class|method|module|line|snippet|"
    r"test|script|diff|patch|pr|commit|branch|reply|answer|message)\b",
]
# explicit project / repository scope ("in this repo", "in the billing-api project")
_PROJECT_SCOPE = [
    r"\b(?:in|for|across|within|throughout|on|to|of) (?:this|our|my) (?:current |whole |entire )?"
    + _PROJECT_NOUNS
    + r"\b(?!-wide)(?: only)?",
    r"\b(?:in|for|across|within|throughout|on) (?:the |our |my )?(?!(?:this|that|a|an|same|every|"
    r"each|any|all|other|new)\b)(?:[\w.\-/]*[\w\-/] ){0,2}(?P<name>`?[A-Za-z0-9_][\w.\-/]*`?)"
    r" (?:project|repo|repository|codebase|monorepo|service|package|app)\b",
    r"\b(?:in|for|across|within|throughout|on) (?:the )?(?:project|repo|repository|codebase) "
    r"(?P<name2>`?[A-Za-z0-9_][\w.\-/]*`?)",
    r"\b(?:project|repo|repository|codebase)[- ]wide\b",
    r"^(?:(?:in|for|on|within|across|throughout) )`?(?P<name3>[a-z0-9]+(?:[-_][a-z0-9]+)+)`?"
    r"(?= we\b| our\b|,? (?:we|our|always|never|please|don'?t|do not|use|prefer|keep|avoid|put|"
    r"write|stick|follow|every|all)\b)",
    r"\bthis " + _PROJECT_NOUNS + r"'s\b",
    r"\b(?:this|our) (?:project|repo|repository|codebase)\b",
    r"(?:^|(?<=[.!?]\s))(?:our|the|this) (?:[\w.-]+ ){0,2}(?:codebase|repo|repository|project|"
    r"monorepo|service|app|crate)(?= (?:(?:only|always|never|already|now|still|generally|"
    r"strictly|does(?:n'?t| not)) )?(?:uses?|is|has|follows?|targets?|runs?|needs?|requires?|"
    r"relies|prefers?|sticks?|enforces?|mandates?|expects?|standardi[sz]es?|bans?|forbids?|"
    r"disallows?|avoids?|adheres?|conforms?|pins?|vendors?|should(?:n'?t)?|must(?:n'?t)?|"
    r"can(?:'?t|not)|won'?t|ha(?:ve|s) to|is(?:n'?t)? supposed to|allows?)\b)",
    r"\b(?:repo|repository|project|codebase|monorepo|code ?base)(?:'s)? (?:conventions?|rules?|"
    r"polic(?:y|ies)|standards?|guidelines?|style|norms?|practice)\b",
]
_GLOBAL_SCOPE = [
    r"\b(?:in|across|for|on|to) (?:all|every|any|each) (?:(?:of )?(?:my|our|your|the) )?(?:projects?|"
    r"repos?|repositories|codebases?)\b",
    r"(?:^|(?<=[.!?;:,]\s))(?:all|every|each|any) (?:(?:of )?(?:my|our|your|the) )?(?:projects?|repos?|"
    r"repositories|codebases?)\b(?= *(?:[.!?;,]|$|too\b|as well\b))",
    r"\b(?:not|isn'?t|aren'?t) (?:just|only) (?:for |in )?(?:this|that|the current|one) "
    r"(?:project|repo|repository|codebase)\b",
    r"\beverywhere\b",
    r"\bno matter (?:the|which|what) (?:project|"
    r"repo|codebase)\b",
    r"\bregardless of (?:the )?(?:project|repo|codebase)\b",
    r"\bglobally\b",
]
# clause openers that introduce an activating condition (the rule fires only then)
_CONDITION_OPENERS = (
    r"(?:whenever|every time|each time|any ?time|in (?:any |all )?cases? (?:where|when)|"
    r"as soon as|once|when(?:ever)?|if|provided that|on any|in situations where|"
    r"for (?:any|every|each) (?:\w+ ){0,2}(?:that|which|where)|"
    r"when(?:ever)? (?:you(?:'re| are)? )?(?:working|editing|touching|changing|modifying|adding|"
    r"writing|creating|opening|reviewing|updating|deleting|removing|renaming|bumping|deploying))"
)
_FILE_NOUNS = (
    r"(?:files?|modules?|scripts?|notebooks?|migrations?|templates?|stylesheets?|configs?|"
    r"configuration files?|dockerfiles?|\w+files|workflows?|pipelines?|directories|directory|folders?|"
    r"packages?|crates?|test suites?|sources?|codebases?|sql|markdown|yaml|json)"
)
_QUALIFIER = r"(?!(?:this|that|these|those|the|a|an|every|each|all|any|some|new|my|your|our)\b)"
_CONDITION_RESTRICT = (
    r"\b(?:for|in|on|within|inside|under|when (?:editing|touching|changing|writing)) "
    r"(?:any |all |every |each |the |our )?"
    + _QUALIFIER
    + r"(?:[\w.*/`'-]+ ){1,3}"
    + _FILE_NOUNS
    + r"\b"
    r"|\b(?:for|in|on|within|inside) (?:any |all |every |each )?(?:make|docker|gem|proc|pip|"
    r"brew|vagrant|jenkins|justfile|rake)files?\b"
)
_EXCEPTION = (
    r"\b(?:unless|except(?: (?:when|for|in|if|on|where|that))?|excepting|other than|apart from|"
    r"excluding|with the exception of|but not (?:for|when|in|on|if)|save for|barring|"
    r"as long as it(?:'s| is) not)\b"
)
_POLITE = (
    r"^(?:(?:ok(?:ay)?|so|also|and|hey|look|listen|note|fyi|btw|right|well|alright|again|"
    r"seriously|honestly|ugh|sigh|yes|no(?=\s*[,.!:;-])|hmm|please|pls|kindly)\b[\s,:;!.-]*)+"
)
_LEAD_INS = (
    r"^(?:(?:can|could|would|will) you(?: please)?|i(?:'d| would) like (?:you )?to|"
    r"i want (?:you )?to|i need (?:you )?to|make sure (?:that |to |you )?|be sure to|"
    r"remember to|don'?t forget to|keep in mind (?:that )?|please|you should|you must|"
    r"you need to|you have to|you'?ve got to|the rule is(?: that)?|i expect (?:you )?to|"
    r"try to|going forward|from now on)\b[\s,:]*"
)
_ONE_OFF = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you|now|also|then|and)\s+)*(?:revert|fix|rename|"
    r"merge|rebase|bump|deploy|ship|undo|close|reopen|re-?run|restart|squash|publish|tag|roll back|"
    r"debug|investigate|look into|find|cherry-pick|resolve|patch|repair|delete|drop)\b",
    _F,
)
_SAME_LENGTH = str.maketrans(
    {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "}
)
# the dash branch starts only at the start of a whitespace run ((?<!\s)): same splits, but a
# long run of spaces is no longer retried from every position (quadratic: 40 KB took 53 s)
#: how far back a cue looks for its sentence's start: scanning back to the sentence start for
#: every cue was quadratic on long unpunctuated text (a 1 MB message); real sentences are shorter
_LOOKBACK = 1000
_SENT_SPLIT = re.compile(r"(?<=[.!?;:])\s+|(?<!\s)\s+[-\u2013\u2014]+\s+|\n+")


@dataclass(frozen=True)
class Span:
    """A cue occurrence: its kind and exact character offsets in the message."""

    kind: str
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Cues:
    """What the cue grammar reads in one message (stable interface; see module docstring).

    ``lasting``/``temporary``: duration cues. ``scope``: ``"project"`` when an explicit
    project/repository scope is named, ``"global"`` when a lasting rule names no project (or says
    everywhere), ``None`` when nothing lasting or scoped is said. ``condition``/``exception``: the
    activating and excepting clauses (exact substrings). ``vague``: the activation is left to
    judgement. ``retraction``: an earlier rule is withdrawn. ``friction``: recurring annoyance.
    ``behavior``: the reusable behaviour clause with cue words removed. ``quotes``: exact
    substrings of the message supporting the reading (cue phrases and the behaviour clause).
    ``hedged``: the only vagueness is a politeness hedge ("it'd be great if"), which a firm
    duration outweighs. ``firm_lasting``: a lasting cue stronger than "in general"/"remember to".
    ``generic_condition``: the activating clause names a recurring kind of situation ("if a
    migration is destructive", "for YAML files"), so the rule lasts even without a duration cue.
    """

    lasting: bool = False
    temporary: bool = False
    scope: Literal["global", "project"] | None = None
    project: str | None = None
    condition: str | None = None
    exception: str | None = None
    vague: bool = False
    retraction: bool = False
    friction: bool = False
    behavior: str | None = None
    quotes: tuple[str, ...] = ()
    preference: bool = False
    explicit_global: bool = False
    behavior_quote: str | None = None
    deictic: bool = False
    spans: tuple[Span, ...] = field(default=(), repr=False)
    hedged: bool = False
    firm_lasting: bool = False
    generic_condition: bool = False

    def features(self) -> dict[str, float]:
        """Numeric cue features (for classifiers); keys are stable."""
        return {
            "lasting": float(self.lasting),
            "temporary": float(self.temporary),
            "project": float(self.scope == "project"),
            "condition": float(self.condition is not None),
            "exception": float(self.exception is not None),
            "vague": float(self.vague),
            "retraction": float(self.retraction),
            "friction": float(self.friction),
            "preference": float(self.preference),
            "has_behavior": float(bool(self.behavior)),
            "deictic": float(self.deictic),
        }


def _finditer(patterns: list[str] | str, text: str, kind: str) -> list[Span]:
    """All non-overlapping matches of any pattern, as spans sorted by position."""
    pats = [patterns] if isinstance(patterns, str) else patterns
    found: list[Span] = []
    for p in pats:
        for m in re.finditer(p, text, _F):
            if m.end() > m.start():
                found.append(Span(kind, m.start(), m.end(), m.group(0)))
    found.sort(key=lambda s: (s.start, -(s.end - s.start)))
    out: list[Span] = []
    for s in found:
        if out and s.start < out[-1].end:
            continue
        out.append(s)
    return out


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` to exclude surrounding whitespace and punctuation."""
    while start < end and text[start] in " \t\n,;:.!?-\u2013\u2014\"'(":
        start += 1
    while end > start and text[end - 1] in " \t\n,;:.!?-\u2013\u2014\"')":
        end -= 1
    return start, end


def _clause_end(text: str, start: int) -> int:
    """Where a subordinate clause that begins at ``start`` ends (comma, dash or sentence end)."""
    m = re.compile(r"[,;.!?\n]|\s[-\u2013\u2014]+\s|\s(?:then|but)\s").search(text, start)
    return m.start() if m else len(text)


def _sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text`` (offsets into the original string)."""
    spans, pos = [], 0
    for m in _SENT_SPLIT.finditer(text):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


# imperative verbs that open the main clause after a comma-less fronted condition
# ("when you add strings to the UI put them in the catalogue"); nouns-that-are-verbs left out
_MAIN_VERB = re.compile(
    r"\s(?:always|never|please|also|don'?t|do not|make sure|be sure|(?:use|add|put|make|write|"
    r"keep|avoid|update|regenerate|mention|include|prefer|pin|create|wrap|bump|ask|tell|split|"
    r"raise|remove|delete|rename|move|flag|leave|stick|follow|rebuild|re-?run|generate|refresh|"
    r"notify|verify|confirm|validate|annotate|explain|describe|extract|refactor|handle|replace|"
    r"convert|squash|rebase|document|run|open|ping|double-check|register|label|notify|link|"
    r"declare|export|annotate|prefix|lock|guard|sanitize|sanitise|escape|quote|mock|stub|skip|"
    r"ignore|ensure|emit|throw|catch|send|tag|cc|consider|drop|reject|warn|fail|print|"
    r"mention|cite|attach|insert|append|commit|push|merge|deploy|release|publish)\b)",
    _F,
)
_SUBJECTS = frozenset(
    "you we i they it to and or should must will can would could also not "
    "test dry ci build the a an each every first last next".split()
)
_FRONT_LEADS = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|hey|please|pls|btw|fyi|note|oh|"
    r"one more thing|rule|new rule|tip)\b[\s,:;!.-]*)*$",
    _F,
)


_WISH_BEFORE = re.compile(
    r"(?i)(?:(?:would|'d) (?:be (?:nice|good|great|helpful|lovely|cool|ideal|appreciated|better|"
    r"best)|(?:like|prefer|love|appreciate) it)|I(?:'d| would) (?:like|prefer|love|appreciate) it)"
    r"\s*$"
)


def _is_fronted(text: str, pos: int, scoped: list[Span]) -> bool:
    """Whether ``pos`` opens its sentence (after at most lead-ins and scope/duration phrases)."""
    start = max(max(text.rfind(ch, 0, pos) for ch in ".!?;:\n") + 1, pos - _LOOKBACK)
    prefix = list(text[start:pos])
    for s in scoped:
        for i in range(max(s.start, start), min(s.end, pos)):
            prefix[i - start] = " "
    return bool(_FRONT_LEADS.match("".join(prefix).strip(" ,-\"'(")))


def _fronted_clause_end(text: str, start: int, end: int) -> int:
    """Cut a comma-less fronted condition where the imperative main clause begins."""
    for m in _MAIN_VERB.finditer(text, start, end):
        before = re.findall(r"[\w'/-]+", text[max(start, m.start() - _LOOKBACK) : m.start()])
        if len(before) >= 2 and before[-1].lower() not in _SUBJECTS:
            return m.start()
    return end


def _condition(text: str, blocked: list[Span], lasting: list[Span]) -> Span | None:
    """The activating clause: a when/if/whenever... clause or a file-type restriction.

    A fronted ``before/after`` clause ("Before you push, run the checks") is a trigger too; a
    trailing one ("run the checks before you push") is the behaviour's own timing.
    """

    def inside_blocked(i: int) -> bool:
        return any(b.start <= i < b.end for b in blocked)

    scoped = [b for b in blocked if b.kind == "project"] + list(lasting)
    opener = re.compile(
        r"(?:^|(?<=[\s,;:(]))(?:" + _CONDITION_OPENERS + r"|before|after|prior to)\b", _F
    )
    for m in opener.finditer(text):
        if inside_blocked(m.start()):
            continue
        word = m.group(0).lower()
        rest = text[m.end() :]
        fronted = _is_fronted(text, m.start(), scoped)
        # "it'd be great if you ...": the if-clause is the wished-for behaviour, not a trigger
        if word in {"if", "when"} and _WISH_BEFORE.search(text[: m.start()]):
            continue
        if word in {"before", "after", "prior to"} and (
            not fronted
            or any(s.start <= m.start() < s.end for s in lasting)
            or not re.match(r"\s+\w", rest)
            or re.match(r"\s+(?:that|this|then|which|all|the fact|now|lunch|today|I)\b", rest, _F)
            or re.match(
                r"\s+we\s+(?:move on|go on|continue|start|begin|get (?:going|started)|"
                r"dive in|proceed|wrap up|look|forget)\b",
                rest,
                _F,
            )
            or re.match(r"[^,;.!?]*:", rest)
        ):
            continue
        # "once" as a count ("just once") and "if" inside "if you want" hedges are not activations
        if word == "once" and not re.match(r"\s+(?:you|we|a|an|the|it|there|any)\b", rest, _F):
            continue
        if word in {"every time", "each time", "anytime", "any time"} and not re.match(
            r"\s+(?:you|we|I|a|an|the|it|there|someone|anyone|something|code|\w+s?\s+(?:is|are|get|"
            r"gets|change|changes))\b",
            rest,
            _F,
        ):
            continue
        if word in {"when", "whenever", "if"} and re.match(r"\s+(?:possible|in doubt)\b", rest, _F):
            continue
        end = _clause_end(text, m.end())
        if fronted and not re.match(r"[,;:\-\u2013\u2014]|\s[-\u2013\u2014]", text[end : end + 2]):
            end = _fronted_clause_end(text, m.end(), end)
        a, b = _strip_span(text, m.start(), end)
        if b - a > len(word) + 2:
            return Span("condition", a, b, text[a:b])
    for m in re.finditer(_CONDITION_RESTRICT, text, _F):
        if inside_blocked(m.start()):
            continue
        a, b = _strip_span(text, m.start(), m.end())
        return Span("condition", a, b, text[a:b])
    for m in _FRONTED_QUANT.finditer(text):
        if inside_blocked(m.start()) or any(s.start <= m.start() < s.end for s in lasting):
            continue
        a, b = _strip_span(text, m.start(), m.end())
        return Span("condition", a, b, text[a:b])
    return None


_FRONTED_QUANT = re.compile(
    r"(?:^|(?<=[,.;:]\s))(?:(?:for|in|on|with|to) (?:any|every|each|all) [^,.;:!?]{3,80}|"
    r"(?:for|in|on|within|inside|under|across) (?!(?:this|that|these|those|my|your|our|the "
    r"(?:future|meantime|record|end|long run|first place)|general|short|particular|fact|addition|"
    r"practice|any case|my opinion|other words|turn|order|total|summary|short|top of|that case|"
    r"this case|any event|brief|sum|passing|hindsight|retrospect|reality|theory|the meantime|"
    r"other news|the same vein|light of|spite of|case)\b)"
    r"[^,.;:!?]{2,60})(?=,)",
    _F,
)


def _scope_giving(text: str, project: list[Span], deictic: bool) -> list[Span]:
    """Keep project spans that set a rule's scope; drop locatives of one-off actions.

    "Revert the last commit in this repo" names where a one-off action happens; "In this repo,
    squash before merging" (fronted) or "This repo uses yarn" (subject) sets a scope.
    """
    kept = []
    for sp in project:
        start = max(text.rfind(ch, 0, sp.start) for ch in ".!?;:\n")
        before = text[start + 1 : sp.start].strip(" ,\"'(-")
        fronted = len(before.split()) <= 2
        sentence = text[start + 1 :].lstrip(" \"'(")
        possessive = text[sp.end : sp.end + 2] == "'s"
        if fronted and not possessive:
            kept.append(sp)
        elif not (
            deictic or possessive or _ONE_OFF.match(sentence) or _DEFINITE_EDIT.match(sentence)
        ):
            kept.append(sp)
    return kept


# a one-off edit of one definite thing: "Update the README ...", "Add a test for the parser ..."
_DEFINITE_EDIT = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you|now|also|then|and|just)\s+)*(?:add|update|"
    r"change|remove|edit|modify|refactor|clean up|tidy(?: up)?|rewrite|move|split|extract|"
    r"document|comment|format|convert|migrate|upgrade|downgrade|replace|optimi[sz]e|speed up|"
    r"simplify|shorten|bump|correct|adjust|tweak|improve|create|write|make)\s+(?:(?:a|an|the|"
    r"that|this|those|these|its|my|our)\s+)?(?:[\w.`'/-]+\s+){0,3}?(?:to|in|for|of|on)\s+"
    r"(?:the|that|this|my|our)\b(?!\s+(?:project|repo|repository|codebase|monorepo|service|app|"
    r"package|library|crate)\b)"
    r"|^(?:(?:please|pls|can you|could you|would you|now|also|then|and|just)\s+)*(?:update|"
    r"change|remove|edit|modify|refactor|clean up|tidy(?: up)?|rewrite|move|split|extract|"
    r"document|format|convert|migrate|replace|optimi[sz]e|simplify|shorten|correct|adjust|tweak|"
    r"improve)\s+(?:the|that|this|those|these|its|my)\b",
    _F,
)


# inherently corrective one-offs (you fix or investigate one specific thing); rule-like verbs such
# as merge/deploy/squash stay scope-giving after a fronted project ("In this repo, squash ...")
_ONE_OFF_DEFINITE = re.compile(
    r"^(?:(?:please|pls|can you|could you|would you|now|also|then|and|just|go ahead and)\s+)*"
    r"(?:revert|fix|undo|repair|debug|investigate|look (?:into|at)|find|track down|figure out|"
    r"resolve|roll back|reopen|restart|cherry-pick)\s+(?:up |out |back |down )?"
    r"(?:the|that|this|it|these|those|my|your|its|where|what|why|how|whatever|which|whether)\b",
    _F,
)


def _one_off_after(text: str, sp: Span) -> bool:
    """Whether the directive that follows a fronted scope is a one-off on a definite thing."""
    end = min([i for i in (text.find(ch, sp.end) for ch in ".!?;\n") if i >= 0] + [len(text)])
    clauses = [c.strip(" ,:-") for c in re.split(r",|\s[-\u2013\u2014]\s", text[sp.end : end])]
    clauses = [c for c in clauses if c]
    return bool(clauses) and bool(_ONE_OFF_DEFINITE.match(clauses[-1]))


def _exception(text: str) -> Span | None:
    """The excepting clause (unless / except ...), up to the end of its clause."""
    m = re.search(_EXCEPTION, text, _F)
    if not m:
        return None
    end = re.compile(r"[;.!?\n]|\s[-\u2013\u2014]+\s").search(text, m.end())
    a, b = _strip_span(text, m.start(), end.start() if end else len(text))
    return Span("exception", a, b, text[a:b])


def _project_name(spans: list[Span]) -> str | None:
    """A project name from an explicit ``in the <name> repo`` phrase, if any."""
    for s in spans:
        m = next(
            (
                x
                for x in (re.search(pat, s.text, _F) for pat in _PROJECT_SCOPE if "?P<" in pat)
                if x
            ),
            None,
        )
        if m:
            g = m.groupdict()
            name = (g.get("name") or g.get("name2") or g.get("name3") or "").strip("`'")
            if name and name.lower() not in {
                "this",
                "our",
                "the",
                "my",
                "current",
                "whole",
                "entire",
                "same",
                "new",
                "main",
                "other",
                "any",
                "every",
            }:
                return name
    return None


def _merge_fragments(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join runs of one-word "sentences" ("Do. Not. Use. Var.") into one emphatic clause."""
    out: list[tuple[int, int]] = []
    short_run = False
    for a, b in spans:
        short = len(text[a:b].split()) <= 1
        if short and short_run and out:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
        short_run = short
    return out


def _behavior(text: str, removed: list[Span]) -> tuple[str | None, str | None]:
    """The behaviour clause: the main sentence with cue, condition and exception spans removed.

    Returns ``(cleaned behaviour, longest exact substring of it in the message)``.
    """
    sentences = _merge_fragments(text, _sentences(text))
    if not sentences:
        return None, None
    mask = [True] * len(text)
    for s in removed:
        for i in range(s.start, s.end):
            mask[i] = False
    best: tuple[float, str, str] | None = None
    for a, b in sentences:
        kept = "".join(ch if mask[i] else "\x00" for i, ch in enumerate(text[a:b], start=a))
        pieces = [p for p in re.split(r"\x00+", kept)]
        cleaned = re.sub(r"\s+", " ", " ".join(p.strip(" ,;:") for p in pieces if p.strip(" ,;:")))
        cleaned = re.sub(r"\s+([,.;:!?])", r"\1", cleaned).strip(" ,;:.!?-")
        for _ in range(3):
            cleaned = re.sub(_POLITE, "", cleaned, flags=_F).strip(" ,;:.!?-")
            cleaned = re.sub(_LEAD_INS, "", cleaned, flags=_F).strip(" ,;:.!?-")
        words = re.findall(r"[A-Za-z`_][\w`'./-]*", cleaned)
        if len(words) < 2:
            continue
        longest = max((p.strip(" ,;:.!?-") for p in pieces), key=len, default="")
        score = len(words) + (
            4
            if re.match(
                r"(?i)(?:do|don'?t|never|always|use|add|run|keep|"
                r"avoid|write|put|make|stop)\b",
                cleaned,
            )
            else 0
        )
        score -= 6 if _is_friction_only(text[a:b]) else 0
        if best is None or score > best[0]:
            best = (score, cleaned, longest)
    if best is None:
        # a friction sentence that is all cue ("You forgot the tests AGAIN"): the complaint itself
        # names the behaviour once the repetition words are dropped
        for a, b in sentences:
            m = re.match(r"(?i)^(.*?\w)[\s,]*(?:(?:yet|once|all over) )?again\b", text[a:b].strip())
            if m and len(m.group(1).split()) >= 3:
                best = (0.0, m.group(1), m.group(1))
                break
    if best is None:
        return None, None
    cleaned = best[1][:1].upper() + best[1][1:]
    return cleaned, best[2] or None


_AGENTIVE_BEFORE = frozenset(
    "you we i please pls should must to and or but so just also will would could can do "
    "shall ll 'll then yes no ok okay and hey dude seriously rule note fyi btw".split()
)
_ARTEFACT = re.compile(
    r"(?i)\b(?:this|that|the|your|these|those) (?:\w+ ){0,2}(?:function|method|class|loop|query|test|"
    r"endpoint|file|script|component|handler|regex|code|module|call|request|route|job|query|"
    r"migration|check|build|service|api|helper|snippet|thing|one)s?(?: (?:you|I) (?:\w+ed|wrote|"
    r"made|built))?(?: (?:just|now|currently|still))? $"
)


def _descriptive(text: str, span: Span) -> bool:
    """An always/never that describes an artefact ("the function you wrote always returns None")."""
    low = span.text.lower()
    after = text[span.end :]
    if low in {"every time", "each time", "whenever", "any time", "anytime"} and re.match(
        r"\s+I\b", after
    ):
        # "every time I run it, it crashes": the user's report, not a rule for the agent
        cut = re.search(r"[,;.!?]", after)
        main = after[cut.end() :] if cut and after[cut.start()] == "," else ""
        return bool(
            re.match(
                r"\s*(?:it|this|that|the \w+|there|nothing|everything|something|"
                r"my \w+|he|she|they)\b(?!\s+(?:should|must|needs? to|has to)\b)",
                main,
                _F,
            )
        )
    if low not in {"always", "never"}:
        return False
    start = max(max(text.rfind(ch, 0, span.start) for ch in ".!?;:,\n") + 1, span.start - _LOOKBACK)
    before = text[start : span.start]
    words = re.findall(r"[\w']+", before.lower())
    if (
        words
        and re.match(
            r"\s+(?:had|was|were|did|got|made|went|ran|saw|came|took|gave|found|"
            r"thought|knew|left|broke|wrote|forgot|heard|meant|kept|lost|sent|"
            r"built|became|began|brought|used to|\w+ed)\b",
            after,
            _F,
        )
        and words[-1] != "you"
    ):
        return True
    if not words or words[-1] in _AGENTIVE_BEFORE:
        return False
    if _ARTEFACT.search(before):
        return True
    return (
        bool(re.match(r"\s+(?!is\b|has\b|does\b|was\b)[a-z]+(?<!s)s\b", after))
        and words[-1] not in {"code", "everyone"}
        and not re.search(
            r"(?i)\b(?:project|repo|repository|codebase|monorepo|service|app|crate|team)\b", before
        )
    )


_GENERIC_COND = re.compile(
    r"^(?:(?:when(?:ever)?|if|once|as soon as|before|after|prior to|provided that)\s+(?:"
    # a generic "you" doing a recurring kind of thing (not "when you're done", "if you can")
    r"(?:you|we)(?:'re| are)?\s+(?!(?:done|finished|ready|able|can|could|want|wish|like|need|think|"
    r"see|feel|agree|mind|prefer|get a chance|have (?:time|a (?:moment|chance))|are done|"
    r"reckon|believe|find (?:it|that)|judge|deem)\b)[a-z]+"
    # an indefinite or quantified subject ("if a migration ...", "when any test ...")
    r"|(?:a|an|any|anyone|someone|something|anything|there(?:'s| is| are)|some|new)\s+\w"
    # a gerund ("before committing", "when writing SQL")
    r"|[a-z]+ing\b"
    # a bare plural subject with a verb ("when tests fail")
    r"|[a-z]+s\s+(?:are|fail|change|break|need|have|get|contain|touch|use|exceed|grow|run|"
    r"return|look|go|come|depend|import|call|take)\b)"
    # a restriction by kind ("for YAML files", "for any new endpoint")
    r"|(?:for|in|on|within|inside|under|across|with|to)\s+(?:(?:any|every|each|all|new)\b|"
    r"(?!(?:the|this|that|these|those|my|your|our)\b)(?:[\w.*`'/-]+\s+){0,3}[\w`'-]+s\b"
    r"(?![\w\s]*\b(?:this|that|the)\b)))",
    _F,
)


def _generic_condition(condition: str) -> bool:
    """Whether an activating clause names a recurring kind of situation (so the rule lasts)."""
    return bool(_GENERIC_COND.match(condition.strip()))


def _is_friction_only(sentence: str) -> bool:
    """A sentence that only voices annoyance ("I keep having to tell you this.")."""
    return bool(re.search(r"(?i)\b(?:this|that|it|so)\s*[.!?]*$", sentence.strip())) and bool(
        _finditer(_FRICTION, sentence, "friction")
    )


@lru_cache(maxsize=8192)
def parse_cues(text: str) -> Cues:
    """Read duration, scope, activation, exception, vagueness, retraction and friction cues.

    Pure and deterministic (results are memoised per text; ``Cues`` is immutable).
    """
    original = text
    # same-length normalisation so offsets still index the original message
    text = text.translate(_SAME_LENGTH)
    lasting = [s for s in _finditer(_LASTING, text, "lasting") if not _descriptive(text, s)]
    # "whenever you're ready" / "when you're done" anchor a one-off to the current task
    completion = _finditer(_COMPLETION, text, "completion")
    lasting = [s for s in lasting if not any(c.start <= s.start < c.end for c in completion)]
    if completion and all(_WEAK_LASTING.match(s.text.strip()) for s in lasting):
        lasting = []
    friction = _finditer(_FRICTION, text, "friction")
    temporary = _finditer(_TEMPORARY, text, "temporary")
    # "not just today's work" / "not only for this PR" widens the rule instead of limiting it
    temporary = [
        t
        for t in temporary
        if not re.search(
            r"\bnot (?:just |only |merely |simply )?(?:for |in |on |during )?$",
            text[max(0, t.start - 24) : t.start],
            _F,
        )
    ]
    if not _FIRM_DURATION.search(text):
        temporary = sorted(
            temporary
            + [
                t
                for t in _finditer(_ARTEFACT_SCOPE, text, "temporary")
                if not any(x.start < t.end and t.start < x.end for x in temporary)
            ],
            key=lambda t: t.start,
        )
    vague = _finditer(_VAGUE, text, "vague")
    hedges = [
        h
        for h in _finditer(_HEDGE, text, "vague")
        if not any(v.start < h.end and h.start < v.end for v in vague)
    ]
    hedged = bool(hedges) and not vague
    vague = sorted(vague + hedges, key=lambda v: v.start)
    retraction = _finditer(_RETRACTION, text, "retraction")
    preference = _finditer(_PREFERENCE, text, "preference")
    project = _finditer(_PROJECT_SCOPE, text, "project")
    deictic = _finditer(_DEICTIC, text, "deictic")
    project = _scope_giving(text, project, bool(deictic))
    explicit_global = _finditer(_GLOBAL_SCOPE, text, "global")
    # an explicit "every project" / "not just this repo" overrides a project noun inside it
    project = [
        p for p in project if not any(g.start < p.end and p.start < g.end for g in explicit_global)
    ]
    # "this task" style spans that are really project nouns are handled by the project grammar;
    # a temporary span fully inside a project span is not temporary ("for this service's PRs")
    temporary = [
        t for t in temporary if not any(p.start <= t.start and t.end <= p.end for p in project)
    ]
    blocked = vague + temporary + project
    exception = _exception(text)
    blocked_cond = blocked + ([exception] if exception else [])
    condition = _condition(text, blocked_cond, lasting + friction)
    if (
        condition is not None
        and exception is not None
        and condition.start >= exception.start
        and condition.end <= exception.end
    ):
        condition = None
    # a vague clause ("when it seems right") is not a usable activation
    if condition is not None and any(
        v.start < condition.end and condition.start < v.end for v in vague
    ):
        condition = None
    generic = condition is not None and not deictic and _generic_condition(condition.text)
    if not (lasting or friction or condition is not None):
        project = [p for p in project if not _one_off_after(text, p)]
    removed = [s for s in lasting if s.text.lower() != "never"]
    removed += friction + temporary + vague + project + explicit_global
    removed += [s for s in (condition, exception) if s is not None]
    behavior, behavior_quote = _behavior(text, removed)
    is_lasting = bool(lasting)
    scope: Literal["global", "project"] | None = None
    if project:
        scope = "project"
    elif is_lasting or friction or explicit_global or preference:
        scope = "global"
    quotes: list[str] = []
    for s in sorted(
        lasting
        + friction
        + temporary
        + vague
        + project
        + explicit_global
        + retraction
        + [x for x in (condition, exception) if x is not None],
        key=lambda s: s.start,
    ):
        a, b = _strip_span(text, s.start, s.end)
        if b > a and original[a:b] not in quotes:
            quotes.append(original[a:b])
    if behavior_quote:
        at = text.find(behavior_quote)
        behavior_quote = original[at : at + len(behavior_quote)] if at >= 0 else None
    if behavior_quote and behavior_quote not in quotes:
        quotes.append(behavior_quote)
    quotes = [q for q in quotes if not any(q != o and q in o for o in quotes)]
    spans = tuple(
        Span(x.kind, x.start, x.end, original[x.start : x.end])
        for x in sorted(
            lasting
            + friction
            + temporary
            + vague
            + retraction
            + preference
            + project
            + explicit_global
            + deictic
            + [x for x in (condition, exception) if x is not None],
            key=lambda s: s.start,
        )
    )
    if condition is not None:
        condition = Span(
            "condition", condition.start, condition.end, original[condition.start : condition.end]
        )
    if exception is not None:
        exception = Span(
            "exception", exception.start, exception.end, original[exception.start : exception.end]
        )
    return Cues(
        lasting=is_lasting,
        temporary=bool(temporary),
        scope=scope,
        project=_project_name(project),
        condition=condition.text if condition else None,
        exception=exception.text if exception else None,
        vague=bool(vague),
        retraction=bool(retraction),
        friction=bool(friction),
        behavior=behavior,
        quotes=tuple(quotes),
        preference=bool(preference),
        explicit_global=bool(explicit_global),
        behavior_quote=behavior_quote,
        deictic=bool(deictic),
        spans=spans,
        hedged=hedged,
        generic_condition=generic,
        firm_lasting=any(not _WEAK_LASTING.match(s.text.strip()) for s in lasting),
    )
