"""Word lists behind the offline extractors (hand-written, closed-class or cue words only).

Limits: bag-of-words cues, English only; no sarcasm, no negation scope beyond a short window,
no domain adaptation. They are cues for *style*, not for meaning.
"""

from __future__ import annotations

#: laughter, joking and playful markers (tone: humorous; emotion: joy)
HUMOR = frozenset("""
lol lmao lmfao rofl haha hahaha hehe heh jk kidding joke jokes joking funny hilarious pun puns
lulz xd meme memes silly goofy roast banter wink lolol ahaha bahaha ha hah yolo nerd nerds dork
rip bruh dude lowkey highkey vibe vibes vibing
""".split())

#: multi-word humorous cues
HUMOR_PHRASES = ("just kidding", "no cap", "asking for a friend", "my brain", "send help",
                 "i'm dying", "im dying", "not gonna lie", "for science", "plot twist", "lol", "haha")

#: politeness, hedging and warmth (tone: gentle)
GENTLE = frozenset("""
please thanks thank appreciate kindly sorry gently hope hopefully grateful dear mind wonder
wondering maybe perhaps sweet kind lovely patience patient
""".split())

GENTLE_PHRASES = ("if you don't mind", "if that's ok", "would you mind", "no rush", "take your time",
                  "thank you", "if possible", "when you have a moment", "i was wondering")

#: words signalling a serious, precise or analytic register (tone: serious; emotion: focused)
SERIOUS = frozenset("""
rigorous rigorously precise precisely formal formally comprehensive comprehensively systematic
systematically thorough thoroughly analysis analyse analyze evaluate evaluation assess assessment
implications implication justify justification derive derivation specify specification criteria
methodology quantitative qualitative empirical theoretical formal accurate accurately detailed
elaborate clarify consequently therefore furthermore moreover whereas hence thus regarding
concerning respective respectively constraints requirements tradeoffs trade-offs
""".split())

#: emotion cue words, one list per category
JOY = frozenset("""
love loved loving awesome amazing great yay excited exciting fun happy glad delighted wonderful
fantastic cool nice yess yesss woohoo hooray enjoy enjoyed enjoying stoked thrilled cute best
excellent brilliant perfect proud delicious beautiful incredible superb yippee celebrate
celebrating excitement glad lucky
""".split()) | frozenset({"haha", "hahaha", "lol", "lmao", "hehe"})

#: multi-word joy cues
JOY_PHRASES = ("can't wait", "cant wait", "so good", "made my day", "over the moon", "so happy",
               "turned out great", "worked perfectly", "it worked", "finally works",
               "feel good", "feeling good", "feel great", "feeling great", "pretty good",
               "so much better", "nailed it", "nailed that", "feel confident", "feeling confident")

FOCUSED = frozenset("""
specifically precisely exactly detailed detail details step steps analyse analyze analysis
evaluate compare comparison outline define definition derive explain explanation criteria
enumerate quantify estimate rigorous systematic structured methodology summarise summarize
implications assess elaborate clarify requirements constraints relevant consider
""".split())

FRUSTRATED = frozenset("""
ugh argh annoying annoyed frustrating frustrated frustration useless broken stupid hate hated
again seriously wtf ridiculous terrible awful worst fail failed failing fails nonsense
irritating irritated sick tired wrong crashes crashing crashed stuck
waste wasted wasting pointless hopeless unhelpful disappointed disappointing disappointment
angry mad furious pissed sucks garbage trash horrible pathetic infuriating unacceptable
livid fuming outraged outrageous appalling rubbish ruined ruin disaster nightmare infuriated
exasperated exasperating damn dammit crap incompetent worthless vague
""".split())

FRUSTRATED_PHRASES = ("still not", "doesn't work", "does not work", "not working", "fed up",
                      "for the third time", "once again", "makes no sense", "why won't", "why wont",
                      "still doesn't", "still isn't", "still won't", "didn't work", "did not work",
                      "never works", "nothing works", "isn't working", "give up", "giving up",
                      "for once", "already told", "i told you", "waste of time", "not helpful",
                      "not helping", "doesn't help", "how many times", "what is wrong",
                      "what's wrong", "sick of", "tired of", "had enough", "stop telling",
                      "same advice", "same answer", "come on", "did nothing", "does nothing",
                      "you never", "you keep", "nobody told", "nobody warned", "don't tell me",
                      "stop giving", "what a waste", "wrong again", "not good enough",
                      "absolutely nothing")

#: words of a formal, written register that chat rarely uses (formality up)
FORMAL_MARKERS = frozenset("""
would shall kindly whom whereby wherein thereof therein hereby therefore furthermore moreover
consequently accordingly nevertheless nonetheless hence thus regarding concerning pertaining
pertains pursuant upon whilst obliged enquire inquire request furnish indicate outline
elucidate principal respective respectively additionally subsequently particular
""".split())

ANXIOUS = frozenset("""
worried worry worrying nervous anxious anxiety afraid scared fear concerned concern panic
panicking stressed stress stressing uneasy unsure overwhelmed deadline urgent urgently risk
risky terrified dread dreading panicky jittery tense freaking
""".split())

#: multi-word anxiety cues
ANXIOUS_PHRASES = ("what if", "in knots", "can't sleep", "couldn't sleep", "freaking out",
                   "freak out", "on edge")

#: interjections, fillers and chat slang (informal register)
INFORMAL = frozenset("""
lol lmao haha hahaha hehe omg omfg wtf tbh imo imho idk idc btw brb gonna wanna gotta kinda
sorta yeah yea yep yup nope nah ok okay k hey hi yo sup dude bro bruh guys ugh hmm hm meh wow
whoa oops yay cool awesome stuff thing things like literally totally super pretty basically
ya u ur r pls plz thx ty cuz coz tho dunno lemme gimme ain't y'all
""".split())

#: first/second person pronouns (frequent in conversational register)
PRONOUNS = frozenset("""
i me my mine myself you your yours yourself we us our ours he him his she her it its they them
their this that these those
""".split())

ARTICLES = frozenset("a an the".split())

PREPOSITIONS = frozenset("""
of in on at by for with from to into onto over under between among through during before after
above below across against along around beyond within without toward towards upon via per
regarding concerning including despite throughout versus about like than
""".split())

CONJUNCTIONS = frozenset("""
and or but nor so yet because although though while whereas since unless whether if then
however therefore moreover furthermore consequently hence thus
""".split())

AUXILIARIES = frozenset("""
is are was were be been being am do does did have has had will would shall should can could
may might must 's 're 've 'd 'll 'm
""".split())

DETERMINERS = frozenset("""
all any each every some no many much more most few several such other another both either
neither own same
""".split())

ADVERBS_FILLER = frozenset("""
just really very so too also even still only actually basically literally totally pretty quite
rather already almost maybe well anyway anyways
""".split())

WH_WORDS = frozenset("what which who whom whose when where why how".split())

#: common relation words (verbs) that link two content chunks into a (subject, relation, object)
RELATION_VERBS = frozenset("""
is are was were be been being has have had do does did can could should would will may might must
use uses used using make makes made making take takes took give gives gave get gets got
provide provides provided require requires required include includes included contain contains
reduce reduces reduced increase increases increased affect affects affected cause causes caused
depend depends depended compare compares compared differ differs differed allow allows allowed
prevent prevents prevented produce produces produced improve improves improved determine
determines determined support supports supported describe describes explain explains
implement implements implemented store stores stored compute computes computed run runs ran
return returns returned handle handles handled show shows showed mean means meant need needs
become becomes became lead leads led yield yields yielded scale scales scaled grow grows grew
""".split())

#: derivational suffixes typical of nouns and adjectives in written, formal register
LATINATE_SUFFIXES = ("tion", "tions", "sion", "sions", "ment", "ments", "ity", "ities", "ance",
                     "ence", "ances", "ences", "ism", "isms", "ical", "ally", "ative", "ive",
                     "ous", "able", "ible", "ize", "ise", "ized", "ised", "ization", "isation",
                     "ology", "ography", "ency", "ancy", "ship")

CONTRACTION_ENDINGS = ("n't", "'m", "'re", "'ve", "'ll", "'d", "’m", "’re", "n’t", "’ll", "’ve")

#: politeness formulas that carry no content
POLITE = frozenset("please thanks thank cheers sorry hello hi hey dear regards".split())
