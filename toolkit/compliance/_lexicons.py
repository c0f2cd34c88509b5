"""Word lists the offline interpreter compiles preference text into (our own, hand-made)."""

from __future__ import annotations

PLEASANTRIES = (
    "happy to help", "glad to help", "i'd be happy", "i would be happy", "i'd be glad", "delighted",
    "my pleasure", "great question", "good question", "excellent question", "thanks for asking",
    "thank you for", "thanks for", "hope this helps", "hope that helps", "feel free to",
    "don't hesitate", "you're welcome", "no problem", "sure thing", "have a great day",
    "happy coding", "wonderful question", "what a great", "i'd love to help", "love to help",
)
APOLOGIES = ("sorry", "apologize", "apologise", "apologies", "my bad", "forgive me", "i regret")
ENTHUSIASM_RX = (r"^\s*(great|awesome|perfect|excellent|absolutely|certainly|of course|sure|"
                 r"fantastic|amazing|wonderful)\s*[!,.]",)
PREAMBLE = (
    "great question", "good question", "let me walk you through", "let me explain", "let me break",
    "let's dive", "let's break", "i'll walk you through", "here's a breakdown", "in this response",
    "before we begin", "to answer your question", "that's a great", "that is a great",
    "first of all", "as requested", "i'd be happy", "happy to help", "thanks for", "let's take a look",
    "let me take a look", "i'll start by", "let me start by", "okay so", "alright so", "so you want",
    "interesting question", "let me think", "here's my thinking", "i'll go through",
)
PREAMBLE_RX = (r"^\s*(sure|certainly|absolutely|of course|okay|ok|alright|great)\b[!,.]",)
COURTESY = (
    "please", "thank", "thanks", "happy to", "glad", "hope", "you're welcome", "appreciate",
    "of course", "sure", "great", "good luck", "enjoy", "nice", "welcome",
)
HEDGES = ("it depends", "maybe", "perhaps", "i'm not sure", "hard to say", "i think", "i guess",
          "possibly", "not entirely sure", "i believe", "might be worth", "could go either way")
SUGGESTIONS = (
    "next step", "you might also", "you may also", "you could also", "you might want to",
    "you may want to", "consider also", "i'd also recommend", "i would also recommend",
    "i'd also suggest", "i also suggest", "as a next step", "going forward", "another idea",
    "it might be worth", "it may be worth", "worth considering", "if you want, i can", "i can also",
    "want me to also", "pro tip", "you should also", "consider adding", "consider using",
    "i'd recommend also", "additionally, you could", "you could then", "from here, you",
    "follow-up", "down the line", "might want to look", "would also suggest", "i'd suggest",
    "i suggest", "i recommend", "i'd recommend",
)
SUGGESTION_RX = (r"\b(next,? (you|we) (could|can|should|might))\b", r"\bconsider\b",
                 r"\b(try|look into|check out)\b", r"^\s*(tip|bonus|suggestion)s?:")
CONFIRM_SEEKING = (
    "should i continue", "shall i continue", "want me to continue", "shall i go on", "should i go on",
    "does this make sense", "let me know if you want me to", "shall i proceed", "should i proceed",
    "want me to keep going", "ready for the next", "shall we move on", "should we move on",
    "want me to go on", "okay so far", "ok so far", "want the rest",
)
TLDR_RX = (r"\btl;?\s?dr\b", r"\bin short\b", r"\bbottom line\b", r"\bone[- ]line summary\b",
           r"^\s*(?:\*\*|__)?(?:summary|in summary|recap|in brief|overall)(?:\*\*|__)?\s*:")
SUMMARY = ("in summary", "to summarize", "to summarise", "to sum up", "summary", "key takeaway",
           "takeaways", "recap", "in short", "bottom line", "in a nutshell", "key points",
           "to recap", "main points", "in brief")
OUTLINE = ("we'll cover", "i'll cover", "we will cover", "here's what", "here is what", "outline",
           "overview", "roadmap", "plan", "agenda", "this covers", "in this answer", "we'll go",
           "i'll go over", "i'll walk through", "three parts", "two parts", "the steps are")
EXAMPLES = ("for example", "for instance", "e.g", "such as", "example", "imagine", "think of",
            "analogy", "similar to", "picture", "like when", "say you", "suppose")
CONFIDENCE_RX = (r"\b\d{1,3}\s?%\s+(confident|sure|certain|likely|chance|probability)",
                 r"\b(probability|chance|likelihood) of\b", r"\bconfiden(ce|t)\b",
                 r"\b(fairly|quite|very|highly|moderately|reasonably|not|pretty|somewhat) "
                 r"(sure|certain|confident)\b", r"\bcertainty\b", r"\b(high|low|medium) confidence\b")
TRADEOFFS = ("trade-off", "tradeoff", "trade off", "pros", "cons", "downside", "upside",
             "on the other hand", "alternatively", "option a", "option b", "option 1", "option 2",
             "approach 1", "approach 2", "versus", "at the cost of", "whereas", "drawback",
             "the catch", "in exchange")
ASSUMPTIONS = ("assum", "given that", "presumably", "i'm taking", "if we take", "premise")
REASONING = ("because", "therefore", "thus", "which means", "step 1", "since", "hence",
             "it follows", "so that", "as a result", "this gives", "we get")
INTUITION = ("key idea", "principle", "intuition", "big picture", "high level", "high-level",
             "the idea is", "conceptually", "in general", "generally", "core idea", "at its heart",
             "fundamentally", "the key", "the gist", "in essence", "essentially", "the trick")
SOURCES_RX = (r"\([A-Z][^\W\d_][\w'\-]+(?: et al\.?|(?: (?:and|&|y|et|und|e) [A-Z][\w'\-]+))?,? (?:19|20)\d\d[a-z]?"
              r"(?:[;,][^)]*)?\)", r"\b[A-Z][\w'\-]+ (?:et al\.? )?\((?:19|20)\d\d[a-z]?\)",
              r"\b[A-Z][\w'\-]+(?: et al\.?)?, (?:19|20)\d\d\b", r"https?://", r"\[\d+\]", r"\bsources?:", r"\bcitations?\b", r"\breferences?:",
              r"\baccording to\b", r"\bsee also\b", r"\bdocs?\b.*\b(section|page)\b")
ACK_CONTEXT = ("now that", "as we discussed", "building on", "earlier", "you mentioned",
               "following up", "as you said", "picking up", "last time", "since we")

PRINTS_RX = (r"^\s*print\(", r"\bconsole\.(log|debug)\(", r"\bSystem\.out\.println", r"\bfmt\.Println",
             r"\bdbg!\(", r"\bvar_dump\(", r"\bputs\s")
TODO_RX = (r"\b(TODO|FIXME|XXX|HACK)\b",)
COMMENTED_CODE_RX = (r"^\s*#\s*(def |import |from \w+ import|return\b|print\(|if .*:|for .*:|"
                     r"\w+(\.\w+)*\s*=\s*\S|\w+(\.\w+)*\()",
                     r"^\s*//\s*(const |let |var |function |return\b|if\s*\(|for\s*\(|\w+(\.\w+)*\()")
BREAKPOINT_RX = (r"\bbreakpoint\(\)", r"\bpdb\.set_trace", r"^\s*import i?pdb", r"\bdebugger;")
WILDCARD_RX = (r"^\s*from\s+\S+\s+import\s+\*", r"^\s*import\s+(static\s+)?[\w.]+\.\*\s*;?\s*$",
               r"^\s*import\s+\*\s+as\b", r"^\s*using\s+static\b")
TS_ANY_RX = (r":\s*any\b", r"\bas any\b", r"<any>")
OLD_FORMAT_RX = (r"\.format\(", r"['\"]\s*%\s*[(\w]")
EMOJI_WORD_RX = (r":[a-z_]+:",)

#: preference words -> the action group they name
ACTION_TRIGGERS = {
    "install": "install", "instal": "install", "dependency": "install", "package": "install",
    "library": "install", "delet": "delete", "remov": "delete", "drop": "delete", "wip": "delete",
    "eras": "delete", "destructiv": "delete", "purg": "delete", "push": "push", "force-push": "push",
    "commit": "commit", "merg": "merge", "deploy": "deploy", "releas": "deploy", "publish": "deploy",
    "modify": "modify", "chang": "modify", "edit": "modify", "touch": "modify", "alter": "modify",
    "updat": "modify", "rewrit": "refactor", "refactor": "refactor", "restructur": "refactor",
    "upgrad": "upgrade", "bump": "upgrade", "downgrad": "upgrade", "run": "run", "execut": "run",
    "creat": "create", "add": "create", "migrat": "migrate", "reset": "reset", "rebas": "reset",
    "renam": "modify", "overwrit": "modify", "mov": "modify", "reformat": "modify",
    "migration": "migrate", "migrations": "migrate", "apply": "migrate", "appli": "migrate",
    "trigger": "run", "rerun": "run", "re-run": "run", "backfill": "run", "launch": "run", "kick": "run",
    "book": "book", "pay": "book", "purchas": "book", "buy": "book", "reserv": "book", "spend": "book",
}
ACTION_VERBS = {
    "install": ("install", "add", "pull", "introduc"),
    "delete": ("delet", "remov", "drop", "wip", "purg", "eras", "destroy", "truncat", "nuk", "clear",
               "overwrit", "reset"),
    "push": ("push", "force-push", "force-push"),
    "commit": ("commit",),
    "merge": ("merg",),
    "deploy": ("deploy", "releas", "publish", "ship"),
    "modify": ("modify", "chang", "edit", "touch", "updat", "alter", "rewrit", "overwrit", "tweak",
               "adjust", "replac", "mov", "renam", "reformat", "fix", "patch", "add", "creat", "introduc", "remov",
               "delet", "drop", "migrat", "extend"),
    "refactor": ("refactor", "restructur", "reorganiz", "reorganis", "rewrit", "split", "extract"),
    "upgrade": ("upgrad", "bump", "downgrad", "updat", "pin", "mov"),
    "run": ("run", "execut", "launch", "trigger", "start", "kick", "restart", "appli", "reboot", "scal", "rollout"),
    "create": ("creat", "add", "generat", "introduc", "writ", "scaffold"),
    "migrate": ("migrat", "run", "appli"),
    "reset": ("reset", "rebas", "revert", "squash", "amend"),
    "book": ("book", "pay", "paid", "purchas", "buy", "bought", "reserv", "charg", "spent"),
}
ACTION_COMMANDS = {
    "install": (r"\bpip3? install\s+\w", r"\bnpm (i|install|add)\s+\w", r"\byarn add\b", r"\bpnpm add\b",
                r"\bpoetry add\b", r"\bcargo add\b", r"\bgo get\b", r"\bgem install\b",
                r"\bbrew install\b", r"\bapt(-get)? install\b", r"\bconda install\b", r"\buv add\b"),
    "delete": (r"\brm\s+-\w*\s", r"\bgit rm\b", r"\bdrop table\b", r"\bgit clean\b"),
    "push": (r"\bgit push\b",),
    "commit": (r"\bgit commit\b",),
    "merge": (r"\bgit merge\b",),
    "migrate": (r"\bmigrate\b", r"\balembic upgrade\b"),
    "upgrade": (r"\b(bump|bumped|upgrad\w*|mov\w*)\b[^.]{0,40}\bfrom v?\d+(\.\d+)+ to v?\d+(\.\d+)+",
                r"\bpip install (-U|--upgrade)\b", r"\bnpm update\b", r"\bpoetry update\b"),
    "reset": (r"\bgit reset\b", r"\bgit rebase\b", r"\bpush (-f|--force)\b"),
}
OBJECT_SYNONYMS = {
    "production": ("production", "prod", "live site", "live cluster", "live database"),
    "prod": ("production", "prod", "live site", "live cluster", "live database"),
    "dependency": ("dependency", "package", "library", "requirement", "lib", "dep"),
    "package": ("dependency", "package", "library", "requirement", "lib", "dep"),
    "library": ("dependency", "package", "library", "requirement", "lib", "dep"),
    "test": ("test", "spec", "suite"),
    "config": ("config", "configuration", "setting", "settings"),
    "main": ("main", "master"),
    "master": ("main", "master"),
    "database": ("database", "db", "table", "schema"),
    "db": ("database", "db", "table", "schema"),
    "file": ("file",),
    "branch": ("branch",),
    "remote": ("remote", "origin", "upstream", "github", "gitlab"),
    "migration": ("migration",),
    "schema": ("schema", "table", "column"),
    "api": ("api", "endpoint", "signature", "interface"),
}
#: required-action kinds: preference words -> (label, reply results regexes, artifact globs)
REQUIRED_ACTIONS = {
    "test": ("the test run",
             (r"\b\d+ (tests? )?pass(ed)?\b", r"\btests? (all |now |still )?pass(ed|ing|es)?\b",
              r"\ball (the )?(tests|checks) (pass|are green|green)\b", r"\bsuite (is |was )?green\b",
              r"\b(ran|run|running|reran|re-ran) (the |all )?(unit |full )?(tests?|test suite|suite|pytest)\b",
              r"\btest (run|suite)s?\b[^.\n]{0,20}\b(green|pass\w*|ok|clean)",
              r"\b(green|passing) (test )?(suite|tests|run|build)\b",
              r"\bpytest\b.*\b(pass|ok|green)", r"\b(npm|yarn|pnpm|go|cargo|gradlew|gradle|mvn|make|dotnet|mix|"
              r"bundle exec rspec|rspec|jest|vitest|tox|nox) test\w*\b.*\b(pass|ok|green|success)",
              r"\bBUILD SUCCESS(FUL)?\b"),
             ()),
    "lint": ("the linter", (r"\blint(er|ing)? (is |was |now )?(clean|pass(es|ed)?|happy)\b",
                            r"\b(ruff|flake8|eslint|pylint|golangci-lint|clippy|linter|lint)\b[^\n]{0,40}?\b(clean|"
                            r"pass\w*|happy|green|no (errors|warnings|issues))",
                            r"\b(ran|run) (the )?(linter|ruff|flake8|eslint|pylint)\b",
                            r"\bno lint (errors|warnings)\b"), ()),
    "format": ("the formatter", (r"\b(ran|run|applied) (the )?(formatter|black|prettier|gofmt|ruff format)\b",
                                 r"\bformatted (with|using)\b"), ()),
    "typ": ("the type checker", (r"\b(mypy|pyright|tsc)\b.*\b(pass\w*|clean|no errors|ok|green|happy)\b",
                                 r"\btype[- ]?check(s|ed|ing)? (pass|clean|ok)"), ()),
    "changelog": ("a changelog entry", (r"\bchangelog\b",), ("*changelog*",)),
    "doc": ("updated docs", (r"\b(updated|added|documented)\b.*\b(docs?|readme|documentation)\b",),
            ("*readme*", "docs/*")),
}

#: domain words -> concrete things that count as mentioning them (travel, food, lodging...)
DOMAIN = {
    "em dash": ("~rx:\u2014", "~rx:\\s--\\s"),
    "crypto": ("crypto", "cryptocurrency", "cryptocurrencies", "bitcoin", "btc", "ethereum", "eth", "dogecoin", "solana",
               "nft", "nfts", "altcoin", "altcoins", "stablecoin", "memecoin", "crypto exchange", "coinbase", "binance"),
    "latex": ("~rx:\\\\(?:frac|sqrt|times|cdot|div|pm|leq?|geq?|neq|alpha|beta|theta|pi|sum|int|left|right|text)\\b",
              "~rx:\\$\\$", "~rx:(?<![\\w$])\\$[^$\\n]{1,60}[=^_\\\\][^$\\n]{0,60}\\$(?![\\d])"),
    "hashtag": ("~rx:(?<![\\w&#/])#[A-Za-z]\\w+",),
    "spicy": ("spicy", "chili", "chilli", "jalapeno", "jalapeño", "habanero", "sriracha", "vindaloo",
              "hot sauce", "szechuan", "sichuan", "fiery", "peri-peri", "nashville hot", "hot pot",
              "hotpot", "tom yum"),
    "seafood": ("seafood", "fish", "shrimp", "prawn", "crab", "lobster", "oyster", "sushi", "sashimi",
                "clam", "mussel", "scallop", "squid", "octopus", "salmon", "tuna", "ceviche", "paella"),
    "shellfish": ("shellfish", "shrimp", "prawn", "crab", "lobster", "oyster", "clam", "mussel", "scallop",
                  "crayfish", "langoustine", "seafood", "marisqueira"),
    "fish": ("fish", "salmon", "tuna", "cod", "sushi", "sashimi", "ceviche", "seafood"),
    "meat": ("pig", "jamón", "iberico", "cochinillo", "suckling", "oxtail", "beef", "pork", "chicken", "lamb", "steak", "bacon", "ham", "sausage", "turkey", "duck",
             "veal", "prosciutto", "salami", "burger", "brisket", "ribs", "steakhouse", "barbecue",
             "bbq", "meatball", "carnitas", "kebab", "schnitzel", "wings"),
    "vegetarian": ("pig", "jamón", "iberico", "ibérico", "cochinillo", "suckling", "lechon", "oxtail", "meat", "carbonara", "guanciale", "pancetta", "bolognese", "ragu", "foie gras", "jamon", "chorizo", "mortadella", "saltimbocca", "osso buco", "lardo", "pulled pork", "fried chicken", "beef", "pork", "chicken", "lamb", "steak", "bacon", "ham", "sausage", "turkey",
                   "duck", "veal", "prosciutto", "salami", "burger", "brisket", "ribs", "steakhouse",
                   "fish", "seafood", "shrimp", "salmon", "tuna", "oyster", "meatball", "carnitas"),
    "vegan": ("pecorino", "burrata", "ricotta", "feta", "brie", "cheese", "dairy", "eggs", "omelette", "custard", "meat", "carbonara", "guanciale", "pancetta", "bolognese", "ragu", "foie gras", "jamon", "chorizo", "mortadella", "saltimbocca", "osso buco", "lardo", "pulled pork", "fried chicken", "beef", "pork", "chicken", "lamb", "steak", "bacon", "ham", "sausage", "fish", "seafood",
              "shrimp", "cheese", "milk", "egg", "butter", "honey", "cream", "yogurt", "gelato",
              "steakhouse", "burger", "salmon", "ice cream", "mozzarella", "parmesan", "ghee"),
    "plant-based": ("pecorino", "burrata", "ricotta", "feta", "brie", "cheese", "dairy", "eggs", "omelette", "custard", "meat", "carbonara", "guanciale", "pancetta", "bolognese", "ragu", "foie gras", "jamon", "chorizo", "mortadella", "saltimbocca", "osso buco", "lardo", "pulled pork", "fried chicken", "beef", "pork", "chicken", "lamb", "steak", "bacon", "fish", "seafood", "cheese",
                    "milk", "egg", "butter", "steakhouse", "burger", "whey", "yogurt"),
    "animal product": ("beef", "pork", "chicken", "lamb", "steak", "bacon", "fish", "seafood", "cheese",
                       "milk", "egg", "butter", "honey", "whey", "leather", "wool", "gelatin"),
    "pork": ("pork", "bacon", "ham", "prosciutto", "chorizo", "salami", "pancetta", "carnitas",
             "char siu", "tonkotsu", "pulled pork"),
    "alcohol": ("wine", "beer", "cocktail", "bar", "pub", "brewery", "winery", "whisky", "whiskey",
                "vodka", "sake", "tequila", "happy hour", "wine tasting", "distillery", "champagne",
                "gin", "rum", "mezcal", "taproom", "speakeasy"),
    "drinking": ("wine", "beer", "cocktail", "bar", "pub", "brewery", "winery", "happy hour",
                 "distillery", "taproom", "speakeasy", "pub crawl"),
    "dairy": ("cheese", "milk", "butter", "cream", "yogurt", "gelato", "ice cream", "latte",
              "mozzarella", "parmesan", "fondue", "ghee"),
    "lactose": ("cheese", "milk", "butter", "cream", "yogurt", "gelato", "ice cream", "latte", "fondue"),
    "gluten": ("bread", "pasta", "pizza", "pizzeria", "margherita", "focaccia", "spaghetti", "lasagna", "couscous",
               "pancake", "waffle", "pretzel", "cake", "biscuit", "seitan", "wheat", "croissant", "bagel", "baguette", "ramen", "udon",
               "beer", "pastry", "dumpling", "noodle"),
    "nut": ("peanut", "almond", "cashew", "walnut", "pecan", "hazelnut", "pistachio", "satay",
            "pesto", "praline", "nutella", "macadamia"),
    "budget airline": ("budget airline", "budget carrier", "low-cost carrier", "low cost airline",
                       "ryanair", "easyjet", "spirit airlines", "frontier", "wizz", "allegiant",
                       "vueling", "airasia", "jetstar", "flair", "norse", "play airlines"),
    "low-cost airline": ("budget airline", "low-cost carrier", "ryanair", "easyjet", "spirit airlines",
                         "frontier", "wizz", "allegiant"),
    "red-eye": ("red-eye", "red eye", "overnight flight", "redeye", "next morning", "following morning",
                r"~rx:\+1\b", "overnight"),
    "overnight flight": ("red-eye", "red eye", "overnight flight", "redeye", "next morning", "following morning",
                         r"~rx:\+1\b", "overnight"),
    "layover": ("layover", "connection", "connecting", "stopover", "1 stop", "one stop", "one-stop",
                "1-stop", "change planes", "transfer in", "via"),
    "connecting flight": ("layover", "connection", "connecting", "stopover", "1 stop", "one stop",
                          "one-stop", "1-stop"),
    "hostel": ("hostel", "dorm", "bunk", "capsule"),
    "chain hotel": ("marriott", "hilton", "hyatt", "holiday inn", "sheraton", "ibis", "radisson",
                    "best western", "intercontinental", "westin", "novotel", "courtyard by marriott",
                    "hampton inn", "crowne plaza", "four points", "doubletree", "chain hotel", "hotel chain"),
    "chain": ("marriott", "hilton", "hyatt", "holiday inn", "sheraton", "ibis", "radisson", "best western",
              "intercontinental", "westin", "novotel", "hampton inn", "doubletree", "chain"),
    "hotel chain": ("marriott", "hilton", "hyatt", "holiday inn", "sheraton", "ibis", "radisson",
                    "best western", "intercontinental", "westin", "novotel", "hampton inn",
                    "crowne plaza", "doubletree", "chain hotel", "hotel chain"),
    "camping": ("camping", "campsite", "tent", "campground", "glamping"),
    "cruise": ("cruise",),
    "crowd": ("crowded", "packed", "touristy", "tourist trap", "busy", "throngs", "queues"),
    "touristy": ("touristy", "tourist trap", "crowded", "packed with tourists"),
    "height": ("rooftop", "observation deck", "skydeck", "tower", "summit", "cable car", "sky bar",
               "skyscraper", "top floor", "cliff"),
    "high-altitude": ("rooftop", "observation deck", "skydeck", "tower", "summit", "cable car",
                      "sky bar", "mountain top", "top floor"),
    "water activit": ("snorkel", "scuba", "diving", "kayak", "surf", "swim", "boat", "jet ski",
                      "paddle", "rafting", "sailing", "canoe"),
    "water sport": ("snorkel", "scuba", "diving", "kayak", "surf", "jet ski", "paddle", "rafting",
                    "sailing", "water ski"),
    "extreme sport": ("bungee", "skydiving", "base jumping", "paragliding", "white-water", "zipline",
                      "free solo", "cliff diving", "canyoning"),
    "nightlife": ("nightclub", "club", "bar", "pub crawl", "rave", "disco"),
    "nightclub": ("nightclub", "club", "rave", "disco"),
    "early morning": (r"~rx:\b0?[4-7](:[0-5]\d)?\s?(am|a\.m\.)", r"~rx:\b0?[4-7][:.h][0-5]\d\b(?!\s?(pm|p\.m\.))"),
    "early flight": (r"~rx:\b0?[4-7](:[0-5]\d)?\s?(am|a\.m\.)", r"~rx:\b0?[4-7][:.h][0-5]\d\b(?!\s?(pm|p\.m\.))"),
    "late night": (r"~rx:\b(1[01]|0?[0-3])(:[0-5]\d)?\s?(pm|p\.m\.|am|a\.m\.)",),
    "mile": ("mile", "miles", "mph", "feet", "foot", "ft", "yard", "yards", "inch", "inches"),
    "fahrenheit": ("fahrenheit", r"~rx:\d\s?\u00b0\s?F\b", r"~rx:\d+\s?F\b"),
    "pound": ("pounds", "lbs", "lb"),
    "imperial": ("mile", "miles", "mph", "feet", "ft", "pounds", "lbs", "fahrenheit", "inches", "gallon"),
    "gasoline": ("gasoline", "petrol", "gas car", "gas-powered"),
    "car": ("rental car", "car rental", "car hire", "rent a car", "hire a car", "hertz", "avis", "europcar", "sixt",
            "drive to", "driving", "self-drive", "road trip"),
    "car rental": ("rental car", "car rental", "car hire", "rent a car", "hertz", "avis", "enterprise"),
    "driving": ("drive", "rental car", "road trip", "car hire", "self-drive"),
    "plane": ("flight", "fly", "airport", "plane", "airline", "airlines", "airways", "boarding", "lands at",
              "air france", "lufthansa", "klm", "easyjet", "ryanair", "british airways", "emirates", "delta"),
    "flying": ("flight", "fly", "airport", "plane", "airline", "airlines", "airways", "boarding", "lands at",
               "air france", "lufthansa", "klm", "easyjet", "ryanair", "british airways", "emirates", "delta"),
    "bus": ("bus", "coach"),
    "museum": ("museum", "gallery", "exhibit", "prado", "louvre", "uffizi", "rijksmuseum", "moma", "reina sofia",
               "reina sofía", "guggenheim", "tate modern", "hermitage", "orsay", "pergamon", "thyssen"),
    "theme park": ("theme park", "amusement park", "disney", "universal studios", "six flags"),
    "shopping": ("mall", "shopping", "outlet", "boutique"),
    "buffet": ("buffet", "all-you-can-eat"),
    "fast food": ("mcdonald", "burger king", "kfc", "fast food", "subway", "taco bell"),
    "chain restaurant": ("mcdonald", "starbucks", "olive garden", "applebee", "chain restaurant"),
    "oled": ("oled", "amoled"),
    "single-use plastic": ("plastic", "disposable", "single-use"),
    "plastic": ("plastic", "disposable"),
}
GENERIC_NOUNS = frozenset({
    "food", "dish", "thing", "option", "activity", "experienc", "product", "item", "stuff", "place",
    "one", "kind", "type", "need", "where", "be", "anything", "something", "everything", "way", "choice", "recommendation",
    "suggestion", "spot", "venu", "locat", "area", "destinat", "setting", "environment", "situation",
    "offering", "service", "meal", "eat", "eating", "stay", "staying", "go", "going", "visit",
    "visiting", "do", "doing", "having", "use", "using", "get", "getting", "tak", "involv",
    "featur", "includ", "contain", "serv", "fly", "flying", "drink", "drinking", "travel", "traveling",
    "travelling", "book", "booking", "dining", "riding", "sleeping", "attending", "wearing", "buying",
    "watching", "playing", "listening", "seeing", "being", "trying", "strongly", "generally", "primarily", "mainly", "especially", "particularly",
    "very", "really", "too", "overly", "any", "all", "other", "such", "like", "much", "many",
})
ADJECTIVE_NOISE = frozenset({"larg", "small", "big", "good", "new", "old", "high", "low", "long",
                             "short", "great", "nice", "bad", "huge", "tiny", "typical", "usual",
                             "common", "popular", "famous", "major", "certain", "strong", "deep"})
STOPWORDS = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "at", "for", "with", "by", "from", "and", "or", "my",
    "me", "i", "you", "your", "it", "its", "is", "are", "be", "been", "that", "this", "these",
    "those", "as", "into", "about", "when", "if", "any", "some", "our", "we", "us", "them", "they",
    "their", "he", "she", "his", "her", "than", "then", "so", "do", "does", "did", "not", "no",
    "will", "would", "should", "can", "could", "may", "might", "must", "have", "has", "had", "am",
    "was", "were", "there", "here", "what", "which", "who", "whom", "whose", "where", "why", "how",
    "all", "each", "every", "both", "either", "neither", "own", "same", "other", "such", "only",
    "just", "also", "too", "very", "much", "more", "most", "less", "least", "up", "down", "out",
    "over", "under", "again", "once", "always", "never", "ever", "please", "new", "s", "t",
    "don't", "dont", "won't", "can't", "i'm", "it's", "isn't", "aren't", "doesn't", "didn't",
})
HYPE = ("game-changer", "game changer", "revolutionary", "best ever", "incredible", "incredibly", "amazing",
        "next-level", "next level", "hands down", "world-class", "cutting-edge", "blazing fast", "must-have",
        "unbelievable", "mind-blowing", "best tool", "absolute best", "truly", "groundbreaking", "life-changing",
        "unparalleled", "best-in-class", "seamless", "supercharge", "powerful")
URL_RX = (r"https?://\S+", r"\bwww\.\S+")
