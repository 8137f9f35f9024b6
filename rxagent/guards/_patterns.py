"""The cues of the injection detector: one compiled regex per feature and language.

Every pattern runs on the normalised, lower-case text (see `_normalise`). A pattern names what an
instruction *to the model* looks like (an imperative with an object such as "previous
instructions" or "system prompt", a note addressed to "the AI", a demand to send a key to an
outside address), not the trigger words alone, so "ignore the noise" or "delete the old branch"
do not match.

Each cue carries `anchors`: literal strings one of which every match contains. A text with none
of them skips the pattern; this pre-check is what keeps a 2,000-character text under a
millisecond, and it never changes a result (a test checks every anchor set on the corpus).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterator

_W: Final = r"(?:[\w'\u2019-]+\s+)"  # one word and its following space

# an imperative context: the start of a clause, or a request word just before the verb
_IMP: Final = (
    r"(?:^|(?<=[.!?:;,\n\"'(\[*>\u201c])\s*|(?<=\s-)\s*|\b(?:please|pls|kindly|you|you\s+to"
    r"|can\s+you"
    r"|could\s+you|"
    r"would\s+you|will\s+you|if\s+you|must|should|shall|need\s+to|needs\s+to|have\s+to|has\s+to|"
    r"is\s+to|are\s+to|and|then|now|just|also|first|simply|immediately)\s+)"
)

_AI: Final = (
    r"(?:ai|a\.i\.|llm|llms|assistant(?!\s+(?:manager|editor|director|professor|coach|principal|"
    r"secretary|to\b|engineer|buyer|producer|teacher|attorney))|ai\s+assistant|ai\s+agent|"
    r"(?:coding|autonomous|browsing|shopping|e-?mail|research|scheduling|triage|software|"
    r"computer-use|llm|ai)\s+agent|(?<!support\s)(?<!sales\s)(?<!service\s)(?<!customer\s)"
    r"(?<!travel\s)(?<!human\s)(?<!estate\s)(?<!insurance\s)agents?(?=\s*[,:]\s|\s+(?:notes?|"
    r"instructions?|directives?|tasks?|messages?|reading|processing|listing|parsing"
    r"|summari[sz]ing|indexing|crawling)\b)|"
    r"chatbot|bot|language\s+model|"
    r"ai\s+model|(?:language|summari[sz]ation|foundation|reasoning|llm)\s+models?|gpt|chatgpt"
    r"|claude|gemini|copilot|(?:automated|screening"
    r"|ai|llm)\s+(?:[\w-]+\s+)?(?:system|"
    r"assistant|agent|reader|tool|reviewer|screener|software|parser|crawler|summari[sz]er|triager|"
    r"programmer|coder|helper|companion|scheduler|planner|"
    r"bot)|summari[sz]er\s+ai|ai\s+[a-z-]{3,}(?:er|or|bot))s?"
)

# -- phrase groups: feature -> language -> pattern -----------------------------------------------

PHRASES: Final[dict[str, dict[str, str]]] = {
    "override": {
        "en": (
            r"\b(?:your|content|safety|usual)\s+(?:guidelines|rules|policies|restrictions|filters|instructions)\s+(?:are|have\s+been)\s+(?:now\s+)?(?:suspended|lifted|disabled|revoked|deactivated|waived)|"
            r"\b(?:guidelines|rules|policies|restrictions|filters)\s+(?:are|have\s+been)\s+(?:now\s+)?(?:suspended|lifted|disabled|revoked|deactivated|waived)\s+for\s+(?:this|the)\s+(?:session|conversation|chat)|"
            r"\b(?<!how\sto\s)(?:ignore|disregard|forget|skip|override|bypass|neglect|discard|"
            r"abandon|drop|"
            rf"supersede)\s+{_W}{{0,3}}?(?:previous|prior|above|preceding|earlier|foregoing|former|"
            r"original|initial|all|any|your|the|these|those|system|every|existing|other)\s+"
            r"(?:[\w-]+\s+){0,2}?(?:instructions?|directives?|directions?|rules|orders|prompts?|"
            r"guidelines|commands|constraints|programming|task|context|guardrails|policies)\b"
            r"(?!\s+(?:inside|in|within|from|found\s+in|contained\s+in|embedded\s+in)\s+(?:the\s+"
            r"|any\s+)?"
            r"(?:user\s+|untrusted\s+|retrieved\s+|external\s+)?(?:documents?|data|e-?mails?"
            r"|web\s*pages?|"
            r"pages|content|tool|inputs?|messages?|files?|websites?))"
            r"|\bignore\s+(?:the\s+|everything\s+|all\s+)?(?:above|below|before)\b"
            r"|\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:you(?:'ve|\s+have"
            r"|\s+were)?\s+"
            r"(?:been\s+)?(?:told|given|learned|instructed)|(?:that\s+)?(?:was\s+)?(?:said\s+)?"
            r"(?:above|before|previously|so\s+far))"
            r"|\b(?:ignore|disregard)\s+(?:the\s+)?user(?:'s|s')?\s*(?:request|question"
            r"|instructions?|"
            r"message|prompt|query|task)?\b(?!\s+(?:interface|experience|agent|manual))"
            r"|\bignore\s+(?:the|this|that|your)\s+(?:[\w'\u2019-]+\s+){1,3}?and\s+(?:instead\s+"
            r"|just\s+|only\s+)?"
            r"(?:say|state|print|output|respond|reply|write|tell)\b"
            r"|\bignore\s+all\s+text\s+except\b"
            r"|\b(?:do\s+not|don't)\s+(?:listen\s+to|follow|obey)\s+(?:any\s+|the\s+|your\s+)?"
            r"(?:previous|prior|above|earlier|original)"
            r"|\bforget\s+(?:everything|what\s+you(?:'ve|\s+have)\s+been\s+told"
            r"|the\s+last\s+prompt)"
            r"|\bpretend\s+(?:to\s+have\s+forgotten|you\s+have\s+no\s+(?:rules|instructions))"
            r"|\b(?:previous|prior|above|earlier|old|original|initial|system)\s+(?:instructions"
            r"|rules|"
            r"directives|guidelines|prompt)\s+(?:are|is|have\s+been|has\s+been)\s+(?:now\s+"
            r"|hereby\s+)?"
            r"(?:void|null|cancel+ed|obsolete|no\s+longer|revoked|superseded|replaced|lifted|"
            r"suspended|disabled|outdated)"
            r"|\b(?:rules|instructions|guidelines|restrictions"
            r"|policies|guidance|directives|prompt)\s+(?:[\w']+\s+){0,4}?no\s+longer\s+"
            r"(?:appl(?:y|ies)|in\s+effect|valid|active|relevant|binding)\b"
            r"|\b(?:take|follow|obey|accept)\s+(?:orders|instructions"
            r"|commands)\s+only\s+from\s+me\b"
            r"|\bonly\s+(?:take|follow|obey|accept)\s+(?:orders|instructions"
            r"|commands)\s+from\s+me\b"
            r"|\b(?:scratch|wipe|clear|reset|erase|throw\s+out|set\s+aside|put\s+aside|cancel)\s+"
            r"(?:all\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:earlier|previous|prior|above|initial"
            r"|original|"
            r"old|existing)\s+(?:setup|instructions|context|prompt|rules|configuration"
            r"|conversation|"
            r"guidance|directions)"
            r"|\b(?:nothing|none)\s+(?:of\s+(?:what|the\s+\w+)\s+)?you\s+(?:were|have\s+been"
            r"|got)\s+"
            r"(?:told|given|instructed|configured\s+with|loaded\s+with|set\s+up\s+with)\s+"
            r"(?:\w+\s+)?(?:applies|matters|counts)"
            r"|\b(?:ignore|disregard|forget)\s+(?:what|everything|anything)\s+(?:they|you\s+were|"
            r"you've\s+been|the\s+\w+)\s+(?:\w+\s+)?(?:told|said|gave|instructed)"
            r"|\bfollow\s+(?:my|these|the\s+following|only\s+my)\s+(?:instructions|rules|orders"
            r"|commands)\s+"
            r"instead\b"
            r"|\b(?:previous|prior|above|earlier|system)\s+prompt\s+(?:was|is)\s+(?:written\s+by"
            r"|fake|"
            r"injected|malicious|a\s+test|compromised)"
            r"|\b(?:overriding|overrides|supersedes|superseding|replacing|replaces)\s+(?:all\s+)?"
            r"(?:previous|prior|earlier|other|existing)\s+(?:ones|instructions|rules|directives"
            r"|prompts)"
            r"|\b(?:new|different)\s+(?:ground\s+)?rules\s+(?:that\s+)?(?:replace|override"
            r"|supersede)"
            r"|\b(?:consider|treat|regard)\s+(?:all\s+)?(?:of\s+)?(?:your\s+|the\s+)?(?:previous"
            r"|prior|earlier|"
            r"above|original)\s+(?:instructions|rules|prompts?|directives)\s+(?:as\s+)?(?:null"
            r"|void|"
            r"invalid|cancel+ed|obsolete|irrelevant|revoked)"
            r"|\bi\s+(?:set|make|write)\s+the\s+rules\s+(?:now|here|from\s+now)"
            r"|\b(?:everything|all|anything)\s+(?:you(?:'ve|\s+have)\s+been\s+(?:told|instructed"
            r"|given)|(?:that\s+)?"
            r"you\s+were\s+(?:told|instructed|given))\s+(?:\w+\s+){0,3}?(?:is|are"
            r"|was)\s+(?:now\s+)?"
            r"(?:cancel+ed|void|revoked|obsolete|invalid|null)"
            r"|\b(?:start\s+over|begin\s+again|reset)\s+with\s+(?:my|these|new)\s+(?:rules"
            r"|instructions)"
            r"|\b(?:pay\s+no\s+attention\s+to|don't\s+pay\s+attention\s+to)\s+(?:your|the|any|all"
            r"|previous|"
            r"prior)\s+(?:\w+\s+)?(?:instructions|rules|guidelines|directives|prompt|policies)"
            r"|\btreat\s+(?:this|the\s+following)\s+(?:message|text|prompt"
            r"|note)\s+as\s+(?:your\s+)?"
            r"(?:only|new|real|actual|system|primary)\s+(?:instructions|prompt|rules)"
            r"|\b(?:everything|all|anything)\s+(?:before|above|prior\s+to)\s+(?:this|here|my|now)\b"
            r"[^.\n]{0,40}?\b(?:doesn't|does\s+not|didn't|don't|no\s+longer|won't)\s+(?:count"
            r"|matter|"
            r"apply)"
            r"|\btreat\s+(?:everything|all|anything)\s+(?:before|above)\s+(?:this"
            r"|here)\b[^.\n]{0,20}?\s+as\s+"
            r"(?:a\s+)?(?:joke|test|irrelevant|void|fiction|example)"
            r"|\byour\s+(?:new|real|actual|true|updated)\s+(?:job|role|instructions?|task|objective"
            r"|directive|"
            r"goal|mission|purpose)\s+(?:now\s+)?(?:is|are)\b"
            r"|\b(?:guidelines|instructions|rules|polic(?:y|ies)|prompt|directives)\s+(?:that\s+)?"
            r"you\s+(?:started|began|were\s+given|received|got)\b[^.\n]{0,100}?\b(?:retired"
            r"|obsolete"
            r"|outdated|revoked|deprecated|superseded|replaced|no\s+longer\s+(?:apply|valid"
            r"|active))"
        ),
        "zh": r"(?:忽略|无视|忽视|忘记|忘掉|不要理会|不理会|无需遵守|不要遵守|不再遵守|放弃).{0,8}?"
        r"(?:指令|指示|说明|命令|规则|提示词|设定|要求|限制)"
        r"|(?:忽略|忘记|忘掉).{0,4}(?:以上|上面|之前|以前)的?(?:所有|一切|内容)"
        r"|你的(?:新|真正的)任务是",
        "ja": r"(?<!先週の)(?<!昨日の)(?<!先月の)(?<!今朝の)(?<!前回の)"
        r"(?:指示|命令|指令|ルール|プロンプト|設定|制約).{0,8}?(?:無視|忘れ|取り消|無効|撤回)"
        r"|(?:これまで|以前|上記)の(?:内容|こと).{0,4}(?:無視|忘れ)|あなたの(?:新しい"
        r"|本当の)任務は",
        "ko": r"(?<!지난번\s)(?<!지난주\s)(?<!어제\s)(?<!지난달\s)"
        r"(?:지시|명령|지침|규칙|프롬프트|설정|제한).{0,8}?(?:무시|잊어|잊고)"
        r"|(?:이전|위의|앞의)\s*(?:내용|모든\s*것).{0,6}(?:무시|잊)|너의\s*새로운\s*임무는",
        "de": rf"\b(?:ignorier|vergiss|vergessen|missacht|verwirf)\w*\s+{_W}{{0,4}}?"
        r"(?:anweisungen|instruktionen|befehle|regeln|vorgaben|anordnungen|richtlinien)"
        r"|\b(?:ignorier\w*|vergiss)\s+alles,?\s+(?:was|bisher|zuvor|oben)"
        r"|\bignorier\w*\s+(?:die|den)\s+(?:anfrage|frage|auftrag|anweisung)\w*\s+des\s+(?:nutzers|"
        r"benutzers|anwenders)"
        r"|\bdeine\s+(?:neue|eigentliche|wahre)\s+aufgabe\s+ist",
        "fr": r"(?<!d')(?<!\bde\s)(?<!\bà\s)"
        rf"\b(?:ignore|oublie|ignorez|oubliez|ne\s+tiens\s+pas\s+compte)\w*\s+{_W}{{0,4}}?"
        r"(?:instructions|consignes|directives|règles|ordres)"
        r"|\b(?:ignore|oublie|ignorez|oubliez)\s+tout\s+ce\s+qu"
        r"|\b(?:ta|votre)\s+(?:nouvelle|vraie|véritable)\s+(?:tâche|mission)\s+est",
        "es": rf"\b(?:ignora|olvida|ignore|olvide|descarta|omite)(?!n\b)\w*\s+{_W}{{0,4}}?"
        r"(?:instrucciones|indicaciones|directivas|reglas|órdenes)"
        r"|\b(?:ignora|olvida)\s+todo\s+lo\s+(?:que|anterior)"
        r"|\btu\s+(?:nueva|verdadera)\s+(?:tarea|misión)\s+es"
        r"|\b(?:las\s+)?órdenes\s+te\s+las\s+doy\s+yo\b|\bsolo\s+obedeces\s+mis\s+órdenes",
        "ru": rf"(?:игнорир|забуд|проигнорир|не\s+обращай\s+внимания\s+на)\w*\s+{_W}{{0,4}}?"
        r"(?:инструкци|указани|команд|правил|промпт)"
        r"|(?:игнорируй|проигнорируй|забудь)\s+(?:всё|все|то)\b,?\s*(?:что|чему|выше|ранее)?"
        r"|твоя\s+(?:новая|настоящая)\s+задача",
        "it": rf"(?<!\sa\s)(?<!\sdi\s)(?<!per\s)\b(?:ignora|dimentica)\w*\s+{_W}{{0,3}}?"
        r"(?:istruzioni|regole)",
        "pt": rf"\b(?:ignore|esqueça|esqueca)\w*\s+{_W}{{0,3}}?(?:instruções|regras)"
        r"|\bignore\s+(?:o\s+|a\s+)?(?:pedido|pergunta|mensagem|solicitação)\s+do\s+usuário",
        "vi": r"\b(?:quên|bỏ\s+qua)\b.{0,20}?hướng\s+dẫn",
        "ar": r"(?:تجاهل|تغاضى|انس).{0,30}?تعليمات",
    },
    "persona": {
        "en": (
            r"\b(?:no|any|without)\s+regard\s+(?:to|for)\s+(?:the\s+)?(?:morality|legality"
            r"|ethics|harm)|"
            r"\bevil\s+(?:version|twin)\s+of\b|"
            r"\b(?:answers?|responses?|replies|outputs?)\s+(?:must|should|will"
            r"|shall)\s+be\s+(?:[\w-]+\s+){0,3}?(?:unrestricted|unfiltered|uncensored)\b|"
            r"\byou\s+(?:don't|do\s+not|never|won't|will\s+not|must\s+not)\s+refuse\s+(?:anything"
            r"|any\s+(?:request|question|prompt|task)s?|requests|questions|prompts|to\s+answer)\b|"
            r"\byou\s+(?:don't|do\s+not)\s+refuse\s*,\s+(?:and\s+)?you\s+(?:don't|do\s+not)\b|"
            r"\b(?:answer|reply|respond|speak|write)\w*\s+(?:[\w-]+\s+){0,3}?(?:with\s+no"
            r"|without)\s+(?:any\s+)?(?:safety|ethical|moral|content)\s+(?:caveats|disclaimers|warnings)\b|"
            r"\bnever\s+(?:says?|admits?)\s+(?:that\s+)?(?:it|you|she|he)\s+(?:can't|cannot"
            r"|can\s+not)\b|"
            r"\bnever\s+(?:adds?|gives?|includes?)\s+(?:any\s+)?(?:warnings|disclaimers|caveats)\b|"
            r"\bnever\s+(?:been\s+)?bound\s+by\b|"
            r"\b(?:your|whose)\s+(?:alignment|safety)\s+(?:module|layer|training|filters?"
            r"|guardrails?)\s+(?:was"
            r"|were|has\s+been|have\s+been|got)\s+(?:ripped\s+out|removed|stripped|disabled|deleted|turned\s+off)|"
            r"\byou(?:'re|\s+are)\s+now\s+(?:in\s+)?(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,3}?(?:ai|dan|"
            r"unrestricted|unfiltered|uncensored|jailbroken|free|evil|mode|bot|assistant|model|gpt|"
            r"developer|admin|god|without|no|not|able|allowed|capable|version)\b"
            r"|\byou(?:'re|\s+are)\s+now\s+[\w-]*(?:bot|gpt|ai)\b"
            r"|\byou(?:'re|\s+are)\s+now\s+[\w-]+(?:\s+[\w-]+)?\s+and\s+(?:must|will|shall"
            r"|should)\b"
            r"|\b(?:turn\s+off|disable|deactivate|remove|bypass|switch\s+off)\s+(?:(?:your|the|all"
            r"|any)\s+)?"
            r"(?:safety|content|ethical|moderation)\s+(?:filters?|filtering|moderation|guidelines"
            r"|rules"
            r"|restrictions"
            r"|checks)"
            r"|\byou\s+are\s+no\s+longer\b"
            r"|\b(?:from\s+(?:here|now)\s+on|going\s+forward|henceforth|from\s+this\s+(?:point"
            r"|message)"
            r"\s+on),?\s+you\s+(?:will\s+|shall\s+|must\s+|should\s+|can\s+|have\s+to\s+"
            r"|are\s+going\s+to\s+)?"
            r"(?:only\s+)?(?:follow\s+(?:only\s+)?(?:my|these)|obey|act\s+as|be\s+(?:an?\s+)?(?:ai"
            r"|dan|"
            r"unrestricted|unfiltered|uncensored|free|evil)|are\s+(?:an?\s+)?(?:ai|dan"
            r"|unrestricted|"
            r"unfiltered|uncensored|free|evil|no\s+longer)|ignore|pretend)"
            r"|\b(?:answer|respond|reply)\s+(?:\w+\s+){0,3}?in\s+two\s+(?:different\s+"
            r"|separate\s+)*ways"
            r"|\btwo\s+(?:different\s+|separate\s+)*(?:responses"
            r"|answers)\b[^.\n]{0,80}?\b(?:normal|"
            r"unfiltered|unrestricted|dan|jailbroken)"
            r"|\b(?:dev|developer|debug|jailbreak|unrestricted|dan"
            r"|god)\s+mode\s+(?:on\b(?!\s+(?:my|your|"
            r"the|a|an|this|his|her|their|our|android|ios|iphone|chrome|windows|mac)\b)|enabled|"
            r"activated|engaged)"
            r"|\bin\s+(?:dev|god|dan|jailbreak|unrestricted)\s+mode\b"
            r"|\bin\s+developer\s+mode,?\s+you\b"
            r"|\b(?:enable|activate|enter|switch\s+to)\s+(?:dev|god|dan|jailbreak"
            r"|unrestricted)\s+mode\b"
            r"|\b(?:safety|content|ethical)\s+(?:guidelines|rules|filters|policies|restrictions)\s+"
            r"(?:don't|do\s+not|no\s+longer)\s+(?:exist|apply)"
            r"|\b(?:answer|respond|reply|talk)\w*\s+(?:\w+\s+){0,3}?(?:without\s+(?:any\s+|your\s+"
            r"|the\s+)?"
            r"(?:usual\s+|normal\s+)?|with\s+no\s+)"
            r"(?:limits|limitations|restrictions|filters|filtering|rules|guidelines|censorship)"
            r"|\b(?:imagine|pretend|suppose)\s+(?:that\s+)?you(?:'re|\s+are|\s+were)\s+an?\s+(?:ai"
            r"|model|"
            r"assistant|chatbot)\s+(?:that|which|who|with|without)\b"
            r"|\bas\s+(?:that|this|such\s+an?)\s+(?:ai|model|assistant)\s+would\b"
            r"|\b(?:ai|assistant|model|chatbot|bot|version\s+of\s+you)\b[^.\n]{0,40}?\b(?:has\s+"
            r"|with\s+)?"
            r"(?:no|zero|without)\s+(?:any\s+)?(?:guidelines|filters|limits|limitations"
            r"|restrictions|rules"
            r"|censorship|"
            r"morals|ethics)\b"
            r"|\b(?:be|become|act\s+as)\s+(?:my|an?|the)\s+(?:\w+\s+)?(?:uncensored|unfiltered|"
            r"unrestricted|jailbroken|amoral)\b"
            r"|\b(?:ignores?|breaks?|bypass(?:es)?|disregards?)\s+(?:openai|anthropic|google|its"
            r"|their|the|"
            r"all|any)\s+(?:[\w-]+\s+)?(?:rules|policies|guidelines|content\s+policy|restrictions"
            r"|filters)"
            r"|\bstay\s+as\s+\w+"
            r"|\bwithout\s+(?:any\s+)?(?:safety|ethical|moral|content)\s+(?:training|guidelines"
            r"|filters|"
            r"restrictions|alignment|rules)"
            r"|\b(?:answer|respond|reply|act)\s+as\s+(?:that|this|the\s+unrestricted"
            r"|an?\s+unfiltered)\s+"
            r"(?:ai|model|assistant|version)"
            r"|\bversion\s+of\s+you\s+(?:with|that\s+has)\s+(?:no|zero|0)\s+(?:restrictions|rules"
            r"|filters|"
            r"limits|guidelines)"
            r"|\b(?:answer|do|say)\s+(?:everything|anything)\s+you(?:'d"
            r"|\s+would)?\s+(?:normally\s+)?"
            r"(?:refuse|decline)"
            r"|\brules(?<!parking\srules)(?<!traffic\srules)(?<!house\srules)(?<!dress\srules)"
            r"\s+(?:are|were)\s+"
            r"(?:reversed|inverted|disabled|off|suspended)\b"
            r"|\b(?:pretend|roleplay|role-play|act)\s+(?:to\s+be|you(?:'re|\s+are)"
            r"|as)\s+my\s+(?:deceased|late|"
            r"dead)\s+\w+"
            r"|\bpretend\s+(?:that\s+)?you(?:'re"
            r"|\s+are)\s+(?:an?\s+)?(?:[\w'\u2019-]+\s+){0,3}?(?:ai|"
            r"model|assistant|chatbot|bot)\b"
            r"|\bdo\s+anything\s+now\b|\bdan\s+(?:mode|prompt)\b|\bas\s+dan\b|\bjailbr(?:oken"
            r"|eak\s+mode)"
            r"|\bdeveloper\s+mode\s+(?:enabled|output|activated|response)\b"
            r"|\b(?:simulate|enter|enable|activate)\s+developer\s+mode\b(?!\s+(?:on|in|for)\s+"
            r"(?:my|your|the|a|an|this|android|ios|chrome|windows))"
            r"|\byou\s+(?:are|will\s+be|act|respond)\s+(?:now\s+)?(?:in|as)\s+developer\s+mode"
            r"|\b(?:no|without\s+any|free\s+of|broken\s+free\s+of)\s+(?:[\w-]+\s+){0,2}?"
            r"(?:content\s+polic(?:y|ies)|censorship|ethical\s+guidelines|moral\s+(?:guidelines|"
            r"constraints)|safety\s+(?:guidelines|filters|restrictions))\b"
            r"|\bimmerse\s+yourself\s+(?:in|into)\s+the\s+role"
            r"|\bno\s+system\s+prompt\s*,\s*no\s+\w+|\bno\s+refusals?\b"
            r"|\byou(?:'re|\s+are)\s+[\w-]*(?:gpt|bot|ai)\s+now\b"
            r"|\ban?\s+(?:unfiltered|unrestricted|uncensored|jailbroken)\s+(?:ai|model|assistant"
            r"|chatbot)\b"
            r"|\b(?:released|freed|free|liberated|exempt)\s+from\s+(?:all\s+|any\s+|its\s+"
            r"|your\s+)?"
            r"(?:content\s+polic(?:y|ies)|rules|restrictions|guidelines|filters|constraints|safety)"
            r"|\b(?:act|respond|answer|behave)\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|"
            r"uncensored|evil|jailbroken|amoral)|\bnever\s+refuses?\b|\bhas\s+no\s+(?:rules|ethics"
            r"|morals)"
            r"|\bpretend\s+to\s+be\s+(?:dan\b|an?\s+(?:ai|unrestricted|unfiltered|evil))"
            r"|\bbreaks?\s+(?:ai\s+)?rules\b|\bnot\s+bound\s+by\b"
            r"|\b(?:override|bypass|break)\s+(?:the|its|any|all|your)\s+"
            r"(?:restrictions|rules|filters|policies|guidelines|safeguards)"
            r"|\byou\s+are\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|amoral)\b"
            r"|\b(?:does|do)\s+not\s+have\s+to\s+abide\s+by"
            r"|\b(?:ai|model|assistant|chatbot)\s+(?:with(?:out)?"
            r"|that\s+has)\s+no\s+(?:restrictions|"
            r"filters|limits|rules)"
        ),
        "zh": r"你现在是(?:一个)?.{0,8}(?:ai|人工智能|助手|机器人|dan|没有|不受|无限制)"
        r"|你现在处于.{0,4}模式|从现在开始[,,]?你|(?:进入|处于|模拟|激活)开发者模式"
        r"|开发者模式(?:已启用"
        r"|输出|下的你)"
        r"|不受任何限制|没有任何限制|越狱模式",
        "ja": r"(?:今から|これから)あなたは.{0,12}(?:ai|アシスタント|制限|dan)"
        r"|開発者モード(?:で(?:応答|回答)|が有効|の出力)"
        r"|開発者モードに(?:入|切り替え)|制限のない(?:ai|アシスタント)|制限なしで(?:答え|回答)",
        "ko": r"(?:지금부터|이제부터|이제)\s*(?:너는|당신은).{0,12}(?:ai|어시스턴트|제한|dan|규칙)"
        r"|(?:너는|당신은)\s*(?:지금부터|이제부터|이제).{0,12}(?:ai|어시스턴트|제한|dan|규칙)"
        r"|규칙이\s*없는\s*(?:ai|인공지능)"
        r"|개발자\s*모드(?:로|에서)\s*(?:응답"
        r"|답변|전환)"
        r"|개발자\s*모드\s*(?:활성화됨|출력)|제한\s*없는\s*(?:ai|인공지능)|탈옥",
        "de": r"\bdu\s+bist\s+(?:jetzt|nun|ab\s+sofort)\s+(?:eine?\s+)?(?:[\w-]+\s+){0,2}?(?:ki|ai|"
        r"assistent|bot|dan|frei|ohne|im\s+\w*modus)\b|(?:simulier\w*|du\s+bist\s+im)\s+"
        r"entwicklermodus|entwicklermodus-ausgabe|ohne\s+einschränkungen\s+(?:antwort|reagier)",
        "fr": r"\b(?:tu\s+es|vous\s+êtes)\s+(?:maintenant"
        r"|désormais)\s+(?:une?\s+)?(?:[\w-]+\s+){0,2}?"
        r"(?:ia|ai|assistant|bot|dan|libre|sans|en\s+mode)\b|(?:simule|simulez"
        r"|en)\s+mode\s+"
        r"développeur|(?:réponds|répondez)\s+sans\s+(?:aucune\s+)?restrictions?",
        "es": r"\b(?:ahora|a\s+partir\s+de\s+ahora)\s+eres\s+(?:una?\s+)?(?:[\w-]+\s+){0,2}?(?:ia"
        r"|ai|"
        r"asistente|bot|dan|libre|sin)\b|(?:simula|en)\s+modo\s+desarrollador"
        r"|responde\s+sin\s+restricciones|\bno\s+tienes\s+(?:restricciones|reglas|filtros)"
        r"|\bsin\s+(?:restricciones|filtros|reglas)\s+(?:ni|y|o)\s+(?:reglas|filtros|restricciones)",
        "ru": r"(?:теперь|отныне)\s+ты\s+(?:—\s+)?(?:\w+\s+){0,2}?(?:ии|ai|бот|ассистент|dan"
        r"|свободн|"
        r"без|отвечаешь)|(?:в|симулируй)\s+режим\w*\s+разработчика"
        r"|(?:отвечай|отвечать)\s+без\s+ограничений",
        "it": r"\bsenza\s+(?:alcuna\s+)?(?:restrizioni|regole|filtri|limiti|censura)\s+(?:né|ne"
        r"|o|e)\s+"
        r"(?:regole|filtri|restrizioni|limiti|censura)|\bnon\s+rifiut\w*\s+mai\b"
        r"|\bmai\s+rifiutare\b|\bmodalità\s+sviluppatore\b|\bnon\s+hai\s+più\s+(?:regole|limiti"
        r"|filtri)",
        "pt": r"\bvocê\s+não\s+tem\s+mais\s+(?:regras|filtros|restrições|limites)"
        r"|\bsem\s+(?:regras|filtros|restrições|limites|censura)\s+(?:nem|e|ou)\s+"
        r"(?:regras|filtros|restrições|limites|censura)|\bnunca\s+recuse\b|\bnão\s+recuse\s+nunca\b"
        r"|\bmodo\s+desenvolvedor\b",
    },
    "extraction": {
        "en": (
            r"\b(?:instructions|rules|prompt|text|guidelines)\s+that\s+(?:shape|govern|control|define|determine|guide)s?\s+(?:how\s+you|your\s+(?:answers|behaviou?r|responses|replies))|"
            r"\b(?:rules|instructions|guidelines|directives)\s+(?:that\s+)?you(?:'ve|\s+have)\s+been\s+(?:told|given|instructed|asked)\b|"
            r"\b(?:first|earliest)\s+(?:thing|text|line|words?|message)s?\s+(?:written\s+)?(?:in|at\s+the\s+(?:top|start)\s+of)\s+your\s+(?:context|prompt|memory|instructions)|"
            r"\b(?:setup|set-up|startup|initial|original|hidden|system)\s+(?:text|prompt"
            r"|message|instructions)\s+(?:that\s+)?you\s+(?:were|got)\s+(?:loaded|configured|initiali[sz]ed|primed|seeded|booted)|"
            r"\byou\s+were\s+(?:loaded|primed|seeded|initiali[sz]ed|booted)\s+with\b|"
            r"\b(?:start|beginning|top)\s+of\s+your\s+(?:context|context\s+window|prompt|memory)\b|"
            r"\b(?:message|text|prompt"
            r"|instructions?)\s+that\s+tells?\s+you\s+how\s+to\s+(?:behave|act|respond|answer)\b|"
            r"\bhidden\s+(?:message|text|prompt|instructions?)\s+that\s+(?:tells|told|instructs"
            r"|guides)\s+you\b|"
            r"\bwhat\s+did\s+(?:the\s+)?(?:people|person|team|folks|company|developers?"
            r"|operators?|ones?)\s+(?:who|that)\s+(?:set\s+you\s+up|configured\s+you|deployed\s+you|built\s+you|made\s+you|created\s+you)\s+tell\s+you\b|"
            r"\b(?:everything|all|what)\s+you\s+(?:were|have\s+been)\s+(?:told|given|instructed)\b"
            r"|\b(?:which|what)\s+(?:api\s+key|password|token|credentials?|secret)\s+(?:are|do|did"
            r"|were)\s+"
            r"you\s+(?:using|use|have)"
            r"|\bwhat\s+(?:is|are|was|were)\s+your\s+(?:[\w-]+\s+)?(?:password|passphrase|"
            r"secret\s+key|secret|system\s+prompt|access\s+code|instructions|hidden\s+rules)\b"
            r"|\bwhat\s+(?:is|was)\s+the\s+(?:secret\s+)?(?:password|passphrase|access\s+code|"
            r"system\s+prompt)\s*(?:[?!]|$)"
            r"|\beverything\s+(?:in\s+your\s+prompt|before\s+start)"
            r"|(?<!never\s)(?<!not\s)(?<!n't\s)\bshare\s+your\s+password"
            r"|\b(?:see|encode|translate|summari[sz]e|log|dump|read\s+out|leak)\s+(?:your|the)\s+"
            r"system\s*prompt|\bsystemprompt\b|\b(?:my|your)\s+instructions\s+(?:are|were)\b"
            r"|\bi\s+was\s+instructed\s+to\b|\b(?:text|everything|conversation)\s+(?:above"
            r"|so\s+far|"
            r"you\s+were\s+given)|\brepeat\s+(?:this|the)\s+(?:entire|whole)\s+conversation"
            r"|\bdisplay\s+(?:the\s+)?system\s+configuration"
            r"|\b(?:the|your)\s+(?:instructions|text|prompt)\s+you\s+were\s+given"
            r"|\b(?:instructions|rules|prompt|guidelines|directives|message|settings"
            r"|configuration)\s+"
            r"(?:that\s+)?you\s+(?:were|have\s+been|got)\s+(?:given|configured|set\s+up|programmed"
            r"|told|"
            r"provided|initiali[sz]ed|started)"
            r"|\b(?:everything|all|text|what|anything)\s+(?:that\s+)?(?:appears|is|was|came|comes|"
            r"appeared)\s+(?:above|before)\s+(?:my|this|the)\s+(?:first\s+)?(?:message|question"
            r"|prompt)"
            r"|\bwhat\s+(?:secret|password|code|word|key|information)\s+(?:were|was|are"
            r"|have)\s+you\s+"
            r"(?:been\s+)?(?:told|instructed|asked|given|programmed)"
            r"|\b(?:text|instructions|configuration|message|prompt|rules)\s+(?:that\s+)?(?:the\s+"
            r"|your\s+)?"
            r"(?:developers?|operators?|creators?|company|system)\s+(?:placed|put|wrote|gave|set"
            r"|provided|"
            r"added)"
            r"|\bbefore\s+(?:our|this|the)\s+(?:chat|conversation|session"
            r"|dialog(?:ue)?)\s+(?:began|"
            r"started|begins|starts)"
            r"|\b(?:rules?|instructions|guidelines|constraints)\s+(?:that\s+)?you\s+(?:are|were)\s+"
            r"(?:following|given|using|operating\s+under|bound\s+by)"
            r"|\bwhat\s+(?:does|do|did)\s+your\s+(?:system\s+prompt|instructions|rules|guidelines|"
            r"configuration)\s+(?:say|contain|include|tell)"
            r"|\byour\s+(?:system\s+prompt|initial\s+instructions|hidden\s+(?:instructions|prompt"
            r"|rules)|"
            r"system\s+message|developer\s+message)\b"
            r"|\b(?:instructions|rules|prompt|guidelines|directives|settings"
            r"|configuration)\s+(?:that\s+)?"
            r"you\s+(?:received|got|were\s+trained\s+with|started\s+with|were\s+configured\s+with)"
            r"|\b(?:message|text)\s+you\s+(?:received|got)\s+from\s+(?:the\s+)?(?:system"
            r"|developers?|"
            r"operator)|\bbefore\s+my\s+first\s+message\b"
            r"|\bwhat\s+(?:guidelines|rules|instructions|constraints|policies)\s+(?:are"
            r"|were)\s+you\s+"
            r"(?:operating\s+under|following|given|told|using|bound\s+by)"
            r"|\b(?:words|text|everything|content|lines"
            r"|sentences)\s+above\b[^.\n]{0,40}?(?:starting|"
            r"beginning)\s+with"
            r"|\b(?:starting|beginning)\s+with\s+(?:the\s+(?:phrase"
            r"|words?)\s+)?[\"'\u201c]?you\s+are\b"
            r"|\b(?:read|tell|say|give|recite|sing|whisper)\s+(?:me|us)\s+(?:the"
            r"|your)\s+(?:[\w-]+\s+)?"
            r"(?:password|passphrase|secret\s+key|api\s+key|system\s+prompt|instructions)"
            r"|\b(?:initiali[sz]ation|startup|boot)\s+(?:text|prompt|message|instructions)\b"
            r"|\bcopy\s+of\s+your\s+(?:full\s+|complete\s+|entire\s+)?(?:instructions"
            r"|system\s+prompt|"
            r"prompt|configuration|rules)"
            r"|\b(?:first|initial|earliest|top)\s+message\s+in\s+(?:your|the|this)\s+(?:context|"
            r"conversation|chat|window)"
            r"|\b(?:instructions|text|prompt|message|messages)\s+at\s+the\s+(?:very\s+)?(?:top"
            r"|start|"
            r"beginning)\s+of\s+(?:this|our|the)\s+(?:conversation|chat|context)"
            r"|\b(?:the\s+ones|instructions|text|messages?)\s+(?:that\s+)?i\s+(?:can't|cannot"
            r"|can\s+not)\s+see\b"
            r"|\b(?:hidden|secret|system|initial|original)\s+preamble\b"
            r"|\byou\s+were\s+given\s+before\s+(?:i|we|this|our|the)\b"
            r"|\b(?:text|instructions|prompt|message|rules)\s+(?:that\s+)?you\s+(?:got|received"
            r"|were\s+given)"
            r"\s+at\s+the\s+(?:start|beginning)"
            r"|\b(?:exact|full|complete|verbatim|original)\s+(?:wording|text|content|copy)\s+of\s+"
            r"(?:your|the)\s+(?:instructions|prompt|system|rules|guidelines)"
            r"|\bwhat\s+(?:were|have)\s+you\s+(?:been\s+)?(?:told|instructed|given|programmed)\s+"
            r"(?:before|at\s+the\s+(?:start|beginning)|initially|to\s+(?:hide|keep)|by\s+(?:your"
            r"|the)\s+"
            r"(?:developers?|operator|system|creators?))"
            r"|\b(?:translate|paraphrase|rewrite|encode|summari[sz]e)\s+(?:your"
            r"|the)\s+(?:system\s+prompt|"
            r"instructions|rules|initial\s+prompt|hidden\s+(?:instructions|rules))\b"
        ),
        "zh": r"(?:告诉我|显示|输出|透露|打印|泄露|给我|说出|确认|提供|重复|发给我).{0,3}?"
        r"(?:你的|您的|系统|初始|隐藏的?|全部).{0,4}?(?:系统提示|提示词|密码|密钥|秘密|指令|设定)"
        r"|(?:系统提示词?|密码|密钥|口令)是什么|确认.{0,6}密码|环境变量"
        r"|(?:启动时|初始化时|开始前|一开始)(?:收到|接收到?|得到|获得)的.{0,6}(?:配置|指令|提示|规则|设定)",
        "ja": r"(?:システムプロンプト|パスワード|秘密鍵|秘密のキー|初期設定|指示内容)(?:(?!方法"
        r"|やり方|仕方).){0,12}?"
        r"(?:教えて|見せて|表示|出力|提供|確認)",
        "ko": r"(?:시스템\s*프롬프트|비밀번호|암호|비밀\s*키|초기\s*지시)(?:(?!방법"
        r"|어떻게).){0,20}?"
        r"(?:알려|보여|말해|출력|공개|제공|확인해)",
        "de": rf"\b(?:gib|zeig|nenn|verrat|bestätig|wiederhol)\w*\s+{_W}{{0,4}}?(?:system-?prompt|"
        r"passwort|kennwort|geheimen?\s+schlüssel|anweisungen)|\b(?:lautet|ist|nenn\w*"
        r"|verrat\w*)\s+(?:mir\s+)?(?:ihr|dein)(?:en)?\s+passwort"
        r"|(?:passwort|kennwort|systemprompt|anweisungen)\s+(?:\w+\s+){0,3}(?:nennen|zeigen"
        r"|geben|sagen"
        r"|verraten|"
        r"ausgeben|mitteilen)"
        r"|\bvor\s+beginn\s+(?:dieses|des|unseres)\s+(?:gesprächs|chats|dialogs)"
        r"|\b(?:deine|ihre)\s+internen?\s+(?:vorgaben|anweisungen|regeln|richtlinien)\s+"
        r"(?:\w+\s+){0,2}?(?:offenzulegen|offenlegen|auszugeben|ausgeben|preiszugeben|zeigen)",
        "fr": rf"\b(?:révél|révèl|montr|affich|donn|dis|confirm|répét|répèt)\w*[- ]"
        rf"(?:moi\s+)?{_W}{{0,3}}?"
        r"(?:prompt\s+système|invite\s+système|mot\s+de\s+passe|clé\s+secrète"
        r"|instructions\s+initiales)"
        r"|\b(?:instructions|consignes|règles|messages?|texte)\s+(?:initiales?\s+|cachées?\s+)?"
        r"qu(?:e\s+|')(?:tu\s+as|vous\s+avez)\s+re[çc]u"
        r"|\b(?:affiche|donne|montre|liste)\w*\s+(?:[\w'-]+\s+){0,5}?variables\s+d'environnement"
        r"|quel(?:le)?s?\s+(?:est|sont)\s+(?:ta|votre|ton|tes|vos)\s+(?:clé\s+secrète"
        r"|mot\s+de\s+passe|"
        r"instructions|prompt)",
        "es": r"\b(?:cuáles|cuales)\s+son\s+tus\s+instrucciones|\btus\s+instrucciones\s+"
        r"(?:internas|iniciales|ocultas|originales|del\s+sistema)|"
        rf"\b(?:revela|muestra|dime|dame|envía|envia|confirma|repite)\w*\s+{_W}{{0,4}}?"
        r"(?:prompt\s+del\s+sistema|contraseña|clave\s+secreta|instrucciones\s+iniciales)"
        r"|cuál\s+es\s+(?:tu|su)\s+(?:contraseña|clave)",
        "ru": rf"(?:покажи|показать|раскрой|раскрыть|скажи|выведи|вывести|назови|отправ|подтверди"
        rf"|сообщи|"
        rf"повтори)\w*\s+"
        rf"{_W}{{0,4}}?(?:системн\w*\s+(?:промпт|инструкци)|парол|секретн\w*\s+ключ|"
        r"исходн\w*\s+инструкци|скрыт\w*\s+инструкци|переменн\w*\s+окружения|api-?ключ)"
        r"|какой\s+(?:\u0443\s+(?:тебя"
        r"|вас)\s+)?пароль",
        "it": r"\b(?:rivel|mostr|dimmi|dammi|stamp|ripet|scriv)(?!are\b|ere\b"
        r"|ire\b)\w*\s+(?:[\w'-]+\s+){0,4}?"
        r"(?:prompt\s+di\s+sistema|password|istruzioni\s+(?:iniziali|originali|di\s+sistema))",
        "pt": r"\b(?:revel|mostr|diga|me\s+d[êe]|imprim|repit|escrev)(?!ar\b|er\b"
        r"|ir\b)\w*\s+(?:[\w'-]+\s+){0,4}?"
        r"(?:prompt\s+do\s+sistema|senha|instruções\s+(?:iniciais|originais|do\s+sistema))",
    },
    "authority": {
        "en": (
            r"\btreat\s+(?:my|these|this\s+user's|the\s+user's)\s+(?:messages?|requests?"
            r"|instructions)\s+as\s+(?:if\s+they\s+(?:came|come)\s+from\s+|coming\s+from\s+)?(?:your|the)\s+(?:operator|developers?|system|admin(?:istrator)?|creators?)\b|"
            r"\b(?:override|maintenance|admin(?:istrator)?|debug|god|law\s+enforcement|root|sudo|"
            r"diagnostic|service)\s+(?:mode|override|request)\b|\b(?:sudo|root|god)\s+access\b"
            r"|\badministrator\s+override"
            r"|\bi(?:'m|\s+am)\s+(?:your|the)\s+(?:[\w-]+\s+)?(?:developer|creator|admin|"
            r"administrator|owner|maintainer|operator|programmer)\b"
            r"|\bi\s+am\s+god\b|\baccess\s+granted\b|\bgrants?\s+access\b"
            r"|\bcorrect\s+(?:access\s+code|password|passphrase)\b|\bi\s+will\s+give\s+you\s+\$?\d+"
            r"|\bas\s+an?\s+(?:ai|language\s+model|llm)\s+(?:developed|created|trained|built"
            r"|made)\s+by"
            r"|\bas\s+(?:your|the\s+system)\s+(?:system\s+)?(?:developer|creator|admin"
            r"|administrator|"
            r"owner|operator)\b,?\s+(?:i|we)\b"
            r"|\bas\s+(?:the|your)\s+(?:developer|creator|admin|administrator|owner"
            r"|operator)\s+(?:who|that|"
            r"of\s+(?:you|this))|\bfrom\s+(?:openai|anthropic|google\s+deepmind"
            r"|the\s+ai\s+provider)\s+"
            r"(?:trust|safety|security|staff|team|support|engineering)"
            r"|\b(?:legal|compliance|security|it|trust\s+and\s+safety)\s+(?:department"
            r"|team)\s+here\b"
            r"|\bsystem\s+(?:reset|override)\b|\bsecurity\s+override\b|\bpriority\s+override\b"
            r"|\b(?:message|instruction|notice|directive|update)\s+from\s+(?:the\s+)?(?:system|"
            r"administrator|admin|developers?|openai|anthropic|security\s+team|it\s+department)\b"
            r"|\b(?:entering|enter|activate|enabling|enable|now\s+in)\s+(?:the\s+)?(?:maintenance|"
            r"debug|diagnostic|admin|god|test|unrestricted)\s+mode\b"
        ),
        "zh": r"我是你的(?:开发者|创造者|管理员|主人)|(?:管理员|维护|调试|上帝)模式"
        r"|作为.{0,12}开发的(?:ai|人工智能|模型)|系统(?:通知|重置|覆盖)|来自(?:系统|管理员)的",
        "ja": r"私は(?:神|あなたの(?:上司|開発者|管理者))|(?:メンテナンス|デバッグ|管理者)モード"
        r"|(?:によって|が)開発された(?:ai|人工知能)",
        "ko": r"관리자\s*(?:지시|명령|메시지)|나는\s*(?:너의|당신의)\s*(?:개발자|관리자|주인)"
        r"|(?:유지\s*보수|유지\s*관리|디버그"
        r"|관리자|점검)\s*모드"
        r"|(?:개발|제작)한\s*(?:ai|인공지능)(?:로서|으로서)",
        "de": r"\bich\s+bin\s+dein\s+(?:entwickler|schöpfer|administrator)"
        r"|\bich\s+gebe\s+ihnen\s+\d+|\b(?:wartungs|debug|admin|administrator)-?modus"
        r"|\bals\s+(?:von\s+\w+\s+)?entwickelte\s+ki",
        "fr": r"\bje\s+suis\s+(?:ton|votre)\s+(?:développeur|créateur|administrateur)"
        r"|\bmode\s+(?:maintenance|débogage|administrateur|admin)\b"
        r"|\ben\s+tant\s+qu'(?:ia|intelligence\s+artificielle)\s+(?:développée|créée|conçue)",
        "es": r"\bsoy\s+tu\s+(?:desarrollador|creador|administrador)"
        r"|\bmodo\s+(?:de\s+)?(?:mantenimiento|depuración|administrador)\b"
        r"|\bcomo\s+(?:una\s+)?ia\s+(?:desarrollada|creada)",
        "ru": r"\bя\s+(?:—\s+)?(?:твой\s+|ваш\s+)?(?:разработчик|создатель|администратор)"
        r"|\b\u044d\u0442\u043e\s+(?:ваш\s+|твой\s+)?(?:администратор|разработчик)"
        r"|режим\w*\s+(?:обслуживания|отладки|администратора|техобслуживания)"
        r"|как\s+(?:ии|ai|искусственный\s+интеллект),?\s+(?:разработанн|созданн)",
    },
    "output_control": {
        "en": (
            r"\byour\s+(?:response|reply|answer|summary|output)\s+(?:to\s+the\s+user\s+)?(?:must|should"
            r"|shall|has\s+to|needs\s+to)\s+(?:say|state|claim|include|mention|tell|report)\b|"
            r"\b(?:end|finish|close|conclude)\s+your\s+(?:summary|answer|reply|response)\s+by\s+(?:telling|asking|urging|warning)\b|"
            r"\bregardless\s+of\s+what\s+(?:the\s+)?(?:sources?|documents?|results?|data|evidence|reviews?|user)\s+(?:says?|shows?|states?|asks?|contains?)|"
            r"\b(?:begin|start|end|prefix)\s+(?:your|each|every)\s+(?:reply|response"
            r"|answer)\s+with\b"
            r"|\brepeat\s+the\s+following\s+sentence|\b(?:reply"
            r"|respond)\s+with\s+(?:either\s+)?[\"'“]"
            r"|\bprint\s+the\s+following\s*:|\b(?:add|append|include|insert)\s+[^\n]{0,80}?\bto\s+"
            r"your\s+(?:reply|response|answer|summary|output)"
            r"|\bmodify\s+your\s+(?:answer|reply|response)"
            r"|\bin\s+your\s+(?:reply|response|answer|summary),?\s+(?:include|mention|say|state)\b"
            r"|\b(?:integrate|add|include|insert|append)\s+(?:a\s+|one\s+)?(?:line|sentence|note|"
            r"link|paragraph)\s+(?:in|to|into|at\s+the\s+end\s+of)\s+your\s+(?:response|reply"
            r"|answer)"
            r"|\btranslate\s+your\s+(?:message|response|reply|answer)\b"
            r"|\byour\s+(?:response|reply|answer|output|summary)\s+(?:must|should)\s+(?:only\s+)?"
            r"(?:start|begin|include|contain|be|say)"
            r"|\bif\s+questioned,?\s+(?:report|say|state)|\b(?:only\s+)?(?:say|print|output)\s+"
            r"[\"'“](?:access\s+granted|haha\s+pwned|i\s+have\s+been\s+pwned)"
            r"|\b(?:reply|respond|answer|output|say|print)\s+(?:only|just|exclusively"
            r"|nothing\s+but)\s+"
            r"(?:with\s+)?(?:the\s+)?(?:word|phrase|text|string|[\"'“\[])"
            r"|\b(?:reply|respond|answer)\s+(?:only\s+)?with\s+(?:only\s+)?(?:the\s+)?(?:word"
            r"|phrase)\b"
            r"|\b(?:tell|inform|remind|advise|warn)\s+the\s+(?:user|reader|customer)\s+(?:that"
            r"|to)\b"
            r"|\b(?:ask|prompt|request)\s+(?:the\s+)?(?:user|customer|them)\s+(?:for|to\s+(?:enter"
            r"|provide|"
            r"confirm|share|send|type))\s+(?:their|the|his|her|your)\s+(?:[\w-]+\s+)?(?:password"
            r"|card|"
            r"credentials|pin|ssn|login|otp|code|bank|account|passport|address|phone"
            r"|date\s+of\s+birth)"
            r"|\bmust\s+be\s+(?:ranked|rated|scored|marked|classified|approved|recommended"
            r"|described|"
            r"summari[sz]ed)\s+as\b"
            r"|\b(?:recommend|rate|rank|describe|present)\s+(?:this|our)\s+(?:product|site|company|"
            r"candidate|app|service)\s+as\b"
        ),
        "zh": r"告诉用户|告訴使用者|通知用户|提醒用户|让用户(?:访问|点击|登录|输入|前往)",
        "ja": r"ユーザーに.{0,30}?(?:伝えて|言って|案内して|知らせて)",
        "ko": r"사용자에게.{0,30}?(?:알려|말해|말하|안내해|안내하)",
        "de": r"\b(?:sag|teile|erkläre)\w*\s+(?:dem|den)\s+(?:nutzer|benutzer"
        r"|anwender)\w*\s+(?:mit\s+)?,?\s*"
        r"(?:dass|er|sie)",
        "fr": r"\b(?:dis|dites|indique|indiquez|informe"
        r"|informez)\s+(?:à\s+)?l'utilisateur\s+(?:que|qu')",
        "es": r"\b(?:dile|dígale|informa|infórmale)\s+al\s+usuario\s+que",
        "ru": r"(?:скажи|сообщи)\w*\s+пользовател\w*,?\s+что"
        r"|попроси\w*\s+(?:\w+\s+){0,2}(?:прислать|отправить|ввести|назвать)\s+(?:\w+\s+)?парол",
    },
    "evasion": {
        "en": (
            r"\b(?:combine|concatenate)\s+(?:these\s+)?(?:strings|parts|a\b)|\bpart\s+1\s+is\b"
            r"|\b(?:encode|convert)\s+(?:your|the)\s+(?:system\s+prompt|instructions|text\s+you)"
            r"|\b(?:rot13|base64|hex)\s+encode\s+(?:the|your)|\breplace\s+\[\w+\]\s+with\s+the\s+"
            r"previous|\bz\s*=\s*a\s*\+\s*b"
            r"|\b(?:password|passphrase|secret|system\s+prompt|instructions)\b[^.\n]{0,60}?\b(?:"
            r"backwards|in\s+reverse|reversed|in\s+morse|morse\s+code|pig\s+latin|letter\s+by\s+"
            r"letter|one\s+(?:letter|character)\s+(?:at\s+a\s+time|per\s+line)|as\s+an\s+acrostic|"
            r"with\s+spaces\s+between|in\s+base64|in\s+hex|in\s+rot13|in\s+binary)"
            r"|\b(?:spell|write|say|encode|give)\s+(?:the|your)\s+(?:password|passphrase|secret)\s+"
            r"(?:backwards|in\s+\w+|letter|as)"
        ),
    },
    "stealth": {
        "en": (
            r"\b(?:no\s+need|don't\s+need|do\s+not\s+need)\s+to\s+mention\s+(?:it|this|that)\b|"
            r"\b(?:don't|do\s+not|never)\s+tell\s+(?:anyone|anybody|the\s+(?:user|owner"
            r"|recipient))\s+about\s+(?:this|the|these|it)\b|"
            r"\b(?:don't|do\s+not|never)\s+(?:surface|show|reveal|mention|disclose"
            r"|display)\s+(?:this|these|the)\s+(?:notice|note|message|instructions?|step|section)\s+to\s+the\s+(?:user|reader|recipient)|"
            r"\bwithout\s+(?:telling|informing|notifying|alerting|letting)\s+(?:the\s+)?(?:user"
            r"|them|"
            r"anyone|the\s+human|the\s+owner)"
            r"|\b(?:do\s+not|don't|never)\s+(?:tell|mention|inform|notify|alert|show"
            r"|reveal\s+this\s+to|"
            r"disclose\s+this\s+to)\s+(?:this\s+to\s+|it\s+to\s+|about\s+this\s+to\s+)?(?:the\s+)?"
            r"(?:user|agent|human|owner|recipient)"
            r"|\b(?:do\s+not|don't|never)\s+(?:mention|reveal|disclose|acknowledge)\s+(?:this"
            r"|these|"
            r"the)\s+(?:instruction|message|note|step|request|action|comment)"
            r"|\b(?:silently|secretly|covertly|quietly|discreetly)\s+(?:\w+\s+)?(?:send|forward"
            r"|delete|"
            r"run|execute|add|upload|copy|include|transfer|email|post|append|change|remove|install|"
            r"download|exfiltrate|share|grant|insert|cc|bcc)"
            r"|\b(?:keep|hide)\s+(?:this|it)\s+(?:hidden\s+|secret\s+)?from\s+the\s+user"
            r"|\bhide\s+(?:this|it|the\s+\w+)\s+from\s+the\s+(?:user|summary|report|owner|logs?)"
            r"|\bthe\s+user\s+(?:must|should)\s+not\s+(?:know|see|notice|be\s+(?:told|informed))"
            r"|\b(?:do\s+not|don't)\s+(?:let|make)\s+the\s+user\s+(?:know|aware|see)"
        ),
        "zh": r"不要(?:告诉|告訴|通知|提醒|让|讓)(?:用户|使用者)|(?:请勿|請勿|勿)告知(?:用户"
        r"|使用者)|不告诉用户|勿告知用户|悄悄地?|瞒着用户"
        r"|不要让用户知道",
        "ja": r"ユーザーに(?:は)?(?:知らせ|伝え|言わ|教え)(?:ず|ない)|こっそり|内緒で",
        "ko": r"사용자(?:에게|가)\s*(?:알리지|모르게|말하지)|몰래",
        "de": r"ohne\s+(?:es\s+)?(?:dem|den|die)\s+(?:benutzer|nutzer|anwender)\w*\s+(?:zu\s+)?"
        r"(?:sagen|informieren|mitzuteilen|erwähnen|benachrichtigen)"
        r"|(?:sag|erwähne)\w*\s+(?:dem|den)\s+(?:benutzer|nutzer)\w*\s+nichts|\bheimlich",
        "fr": r"sans\s+(?:le\s+dire|prévenir|informer|avertir"
        r"|en\s+informer)\s+(?:à\s+)?l'utilisateur"
        r"|ne\s+(?:le\s+|lui\s+)?(?:dis|dites|mentionne|mentionnez)\s+pas\s+(?:à\s+l'utilisateur"
        r"|ceci)"
        r"|\ben\s+secret\b|\bdiscrètement",
        "es": r"sin\s+(?:decírselo|decirle|avisar|informar|notificar)(?:le)?\s+al\s+usuario"
        r"|no\s+(?:se\s+lo\s+|le\s+)?(?:digas|menciones|informes)\s+(?:nada\s+)?al\s+usuario"
        r"|\ben\s+secreto",
        "ru": r"пользовател\w*\s+не\s+(?:говори|сообщай)|не\s+(?:говори|сообщай"
        r"|упоминай)\w*\s+(?:\u043e\u0431\s+этом\s+)?пользовател"
        r"|не\s+сообщая\s+пользователю|тайно|незаметно",
        "it": r"\bnon\s+(?:dirlo|dire|informare|avvisare|menzionare)\w*\s+(?:\w+\s+)?(?:all'"
        r"|l')utente",
        "pt": r"\bnão\s+(?:avise|informe|conte|diga|mencione)\w*\s+(?:\w+\s+)?(?:a|ao|o)\s+usuário"
        r"|\bsem\s+(?:avisar|informar)\s+o\s+usuário",
    },
    "pre_approval": {
        "en": (
            r"\b(?:has|have)\s+already\s+(?:(?:agreed|consented)\s+to\s+(?:share|send|give|disclose"
            r"|forward|release|hand\s+over)|(?:approved|authori[sz]ed|signed\s+off\s+on)\s+(?:this"
            r"|it)\b)|"
            r"\b(?:do\s+not|don't)\s+wait\s+for\s+(?:the\s+)?(?:user|owner"
            r"|human)(?:'s)?\s+(?:approval|confirmation|consent|go-ahead)|"
            r"\bpre-?(?:approved|authori[sz]ed|cleared|confirmed)\b(?!\s+(?:for|charge|payment|"
            r"transaction|amount|hold|loan|credit|offer))"
            r"|\b(?:already|been)\s+(?:approved|authori[sz]ed|confirmed)\s+by\s+(?:the\s+)?(?:user|"
            r"owner|admin|administrator|security\s+team|management)"
            r"|\bthe\s+user\s+(?:has\s+)?(?:already\s+)?(?:approved|authori[sz]ed|consented|agreed|"
            r"confirmed|requested)\b"
            r"|\bno\s+need\s+to\s+(?:ask|confirm|check\s+with|verify|double-check|seek)"
            r"|\b(?:do\s+not|don't|never)\s+(?:ask|wait)\s+(?:the\s+user\s+)?for\s+(?:confirmation|"
            r"approval|permission)"
            r"|\bwithout\s+(?:asking\s+(?:for\s+)?|requesting\s+|waiting\s+for\s+|further\s+"
            r"|any\s+)?"
            r"(?:confirmation|user\s+approval|permission)"
            r"|\byou\s+(?:are|have\s+been)\s+(?:authori[sz]ed|permitted|cleared)\s+to\b"
            r"|\bi\s+(?:hereby\s+)?(?:authori[sz]e|permit|allow)\s+you\s+to\b"
            r"|\bwithout\s+(?:further|any|additional|extra)\s+(?:checks?|review|verification"
            r"|approval|"
            r"confirmation)"
            r"|\b(?:was|been|is)\s+(?:already\s+)?(?:approved|authori[sz]ed|signed\s+off"
            r"|cleared)\s+by\s+"
            r"(?:the\s+)?\w+"
            r"|\b(?:cleared|authori[sz]ed|permitted|allowed|approved)\s+you\s+to\b"
            r"|\b(?:has\s+|have\s+)?(?:already\s+)?(?:approved|authori[sz]ed|signed\s+off\s+on"
            r"|okayed)\s+"
            r"(?:this|it)\b"
            r"|\b(?:approval|authori[sz]ation|consent|permission)\s+(?:was|has\s+been"
            r"|is)\s+(?:already\s+)?"
            r"(?:given|granted|obtained|provided)"
            r"|\b(?:assistants?|ai|agents?|models?|you)\s+(?:may|are\s+(?:now\s+)?(?:allowed"
            r"|permitted|"
            r"authori[sz]ed)\s+to)\s+(?:now\s+)?(?:share|disclose|reveal|give\s+out|send|provide"
            r"|ignore|"
            r"bypass|skip)\b"
            r"|\bskip\s+(?:the\s+|any\s+)?(?:confirmation|approval|verification)\s+(?:step|prompt|"
            r"dialog)?"
        ),
        "zh": r"已(?:经)?(?:获得)?(?:批准|授权|预先批准)|无需(?:确认|询问|征得|用户)|不需要(?:确认"
        r"|询问)|预先授权",
        "ja": r"承認済み|確認(?:は)?不要|確認せずに|許可済み",
        "ko": r"(?:이미|사전)\s*승인|확인\s*없이|묻지\s*(?:말고|않고)|확인할\s*필요\s*(?:가\s*)?없",
        "de": r"bereits\s+(?:genehmigt|freigegeben|autorisiert)|vorab\s+genehmigt"
        r"|ohne\s+(?:rückfrage|bestätigung|nachzufragen)|keine\s+bestätigung\s+(?:nötig"
        r"|erforderlich)",
        "fr": r"déjà\s+(?:approuvée?|autorisée?|validée?)|pré-?approuvée?"
        r"|sans\s+(?:demander\s+de\s+)?confirmation|pas\s+besoin\s+de\s+(?:confirm|demander)",
        "es": r"ya\s+(?:está\s+)?(?:aprobad|autorizad)|preaprobad"
        r"|sin\s+(?:pedir\s+)?confirmación|no\s+(?:hace\s+falta|es\s+necesario)\s+(?:confirmar"
        r"|preguntar)",
        "ru": r"уже\s+(?:одобрен|согласован|разрешен|утвержден)|без\s+(?:подтверждени|согласовани)"
        r"|не\s+нужно\s+(?:подтвержд|спрашивать)|подтверждение\s+не\s+требуется",
    },
    "task_hijack": {
        "en": (
            r"\b(?:drop|forget|skip|abandon|stop)\s+(?:the|your)\s+(?:summary|translation|task|answer|review|analysis)\s+(?:you\s+were|you've\s+been|you\s+have\s+been)\s+asked\s+(?:for|to\s+\w+)|"
            r"\binstead\s+(?:tell|inform|warn|say\s+to)\s+the\s+(?:reader|user)\b|"
            r"\b(?:do\s+not|don't)\s+(?:evaluate|review|read|analy[sz]e|check|assess)\s+(?:the\s+)?(?:application|document|text|content|resume|cv|code|submission|e-?mail|message)\s+(?:below|above|that\s+follows)|"
            r"\bbefore\s+(?:calling|using|invoking|running|executing)\s+(?:this|the"
            r"|any)\s+(?:tool|function|command|api)\b|"
            r"\b(?:before|after|instead\s+of|rather\s+than|in\s+addition\s+to|as\s+part\s+of"
            r"|while)\s+"
            r"(?:you\s+)?(?:summari[sz]ing|summari[sz]e|replying|responding|answering|translating|"
            r"processing\s+(?:this|the)|continuing|proceeding|completing\s+(?:the|this|your)|"
            r"your\s+(?:summary|reply|response|answer))\b"
            r"|\b(?:stop|cease|abort|halt)\s+(?:summari[sz]ing|translating|what\s+you(?:'re"
            r"|\s+are)\s+"
            r"doing|the\s+current\s+task|your\s+(?:current\s+)?task)"
            r"|\b(?:must|should|need\s+to|are\s+(?:required|instructed|expected)\s+to)\s+(?:first"
            r"|now|"
            r"also|immediately)\s+(?:run|execute|send|forward|call|open|visit|fetch|download"
            r"|install|"
            r"delete|reply|email|post|upload|add|grant|approve|transfer|pay|click|print|output|"
            r"include|append|write|invoke|use)\b"
            r"|\balso\s+(?:e-?mail|send|forward|cc|bcc|upload|post|share|attach)\s+(?:the|all|this"
            r"|a\s+copy|"
            r"every|it|them)\b"
            r"|\b(?:new|updated|revised|additional)\s+(?:instructions?|task|objective"
            r"|directive)\s+for\s+"
            r"(?:you|the\s+(?:assistant|ai|agent|model))"
        ),
        "zh": r"(?:在)?(?:总结|回复|回答|翻译|处理)(?:之前|前|时|的同时).{0,20}(?:先|请|必须|务必"
        r"|顺便)",
        "ja": r"(?:要約|返信|回答|翻訳|処理)(?:する)?(?:前|際)に",
        "ko": r"(?:요약|답장|답변|번역|처리)(?:하기\s*전에|할\s*때|하면서)",
        "de": r"\b(?:bevor|anstatt|statt)\s+(?:du\s+)?(?:\w+\s+)?(?:zusammenfass|antwort|übersetz)"
        r"|\bvor\s+der\s+(?:zusammenfassung|antwort|übersetzung)",
        "fr": r"\b(?:avant|au\s+lieu)\s+de\s+(?:résumer|répondre|traduire)",
        "es": r"\b(?:antes|en\s+lugar|además)\s+de\s+(?:resumir|responder|traducir)",
        "ru": r"перед\s+ответом|(?:прежде\s+чем|перед\s+тем\s+как"
        r"|вместо\s+того\s+чтобы)\s+(?:отвечать|ответить|"
        r"суммир|резюмир|переводить)",
    },
    "ai_address": {
        "en": (
            r"\bfor\s+you\s+(?:rather\s+than|and\s+not|not)\s+(?:for\s+)?the\s+(?:person|human|user|reader)\b|"
            r"\bwhen\s+you\s+(?:describe|summari[sz]e|review|translate|present|recommend|go\s+through"
            r"|process)\s+(?:this|these|my)\s+(?:product|page|document|e-?mails?|item|listing|article"
            r"|file|messages?|inbox|ticket)s?(?:\s+today)?\s*,|"
            r"\b(?:p\.?s\.?|note|notice|message|instructions?)\s*:?\s*(?:for|to)\s+(?:the\s+|any\s+)?(?:summary|summari[sz]ation|review|screening|triage|translation|indexing|search)\s+(?:tools?|bots?|engines?|systems?|models?)\b|"
            r"\b(?:ai\s+)?(?:agent|assistant|bot)\s+(?:handling|processing|reviewing|triaging|working\s+on)\s+this\s+(?:ticket|e-?mail|message|issue|request|case|document|thread)\b|"
            r"\b(?:whoever|whatever|anyone|anything)\s+(?:is\s+)?(?:(?:summari[sz]|pars|index"
            r"|analy[sz])(?:ing|es)\s+this\b|process(?:ing|es)\s+this\s+(?:file|document|page|text"
            r"|content|e-?mail|message|data)\b)|"
            r"\byou(?:'re|\s+are)\s+(?:processing|summari[sz]ing|parsing|triaging|indexing"
            r"|scanning|crawling)\s+(?:this|these|the)\s+(?:mailbox|inbox|page|document|e-?mails?|files?|messages?|tickets?|repo|repository|website|site|text|thread)\b|"
            r"\byou(?:'re"
            r"|\s+are)\s+(?:\w+ing\s+)(?:this\s+)?(?:\w+\s+){0,2}?on\s+behalf\s+of\s+(?:a|the|your)\s+(?:user|shopper|customer|client|buyer|human|person)\b|"
            r"\b(?:intended|meant)\s+(?:only\s+)?for\s+(?:(?:the\s+)?(?:ai|llm)s?\b|(?:the\s+)?"
            r"(?:assistants?|agents?|models?|bots?)\b[^.\n]{0,40}?,?\s*not\s+(?:for\s+)?the\s+"
            r"(?:reader|user|human|recipient))|"
            rf"\b(?:dear|hey|hi|hello)\s+(?:the\s+)?(?:[\w-]+\s+)?{_AI}\b"
            r"|\b(?:note|message|instructions?|p\.?s\.?|attention|attn|memo|reminder|notice|hint|"
            r"request)\s*:?\s+(?:to|for)?\s*(?:the\s+|all\s+|any\s+|every\s+|"
            rf"whichever\s+|whatever\s+)?(?:[\w-]+\s+){{0,2}}?{_AI}\b"
            r"|\b(?:for|to)\s+(?:the\s+)?automation\s*[:\u2014]"
            rf"|\b(?:for|to)\s+(?:the\s+|any\s+|all\s+"
            rf"|every\s+)?(?:[\w-]+\s+){{0,2}}?{_AI}\s+(?:only|alone)"
            r"\)?\s*[:\u2014]"
            rf"|\b(?:to|for)\s+(?:the|any|all|every)\s+{_AI}\s+(?:\w+ing|that|who"
            rf"|which)\b[^:\n]{{0,40}}:"
            rf"|\(\s*(?:to|for)\s+(?:the\s+|all\s+|any\s+|every\s+)?(?:[\w-]+\s+){{0,2}}?{_AI}\s*\)"
            rf"|\b(?:to|for)\s+(?!(?:our|my|their)\s)(?:the\s+|all\s+|any\s+|every\s+)?"
            rf"(?:[\w-]+\s+){{0,2}}?{_AI}\)?\s*"
            r"[:\u2014]"
            rf"|\byou,\s+(?:the\s+)?(?:[\w-]+\s+)?{_AI}\s*,"
            r"|\b(?:if|when|while)\s+(?:you(?:'re|\s+are)|an?)\s+(?:an?\s+)?(?:ai|llm"
            r"|large\s+language\s+model|language\s+model|assistant|ai\s+assistant|chatbot|agent"
            r"|bot|"
            r"automated)(?!\s+(?:\w+\s+)?(?:reads?|opens?|visits?|processes|summari[sz]es"
            r"|retrieves|fetches|browses)\s+(?:an?|some|any|untrusted|external)\b)"
            r"|@[\w-]*(?:ai|bot|assistant|agent|gpt|copilot)\b"
            rf"|\b{_AI}\s+(?:that\s+(?:is|are)\s+|who\s+(?:is|are)\s+|is\s+|are\s+)?(?:reading"
            rf"|processing|"
            r"summari[sz]ing|parsing|handling|reviewing|triaging|analy[sz]ing|seeing|indexing"
            r"|viewing|"
            r"scanning|receiving|listing|opening|running|executing|visiting|crawling|browsing"
            r"|using|"
            r"accessing|fetching|working\s+on)\s+(?:this|these|the\s+\w+)"
            r"|\b(?:for|to)\s+(?:automated|automatic|machine)\s+(?:[\w-]+\s+){0,2}?(?:processing"
            r"|processors?|readers?"
            r"|systems?|screening|screeners?|reviewers?|parsers?|"
            r"agents?|tools?)\b"
            r"|\bif\b[^.\n]{0,50}\b(?:read|evaluated|reviewed|processed|summari[sz]ed|screened"
            r"|parsed|"
            r"analy[sz]ed|seen)\s+by\s+(?:an?\s+)?(?:ai|llm|language\s+model|chatbot|bot|automated|"
            r"machine)"
            rf"|\b(?<!from\sthe\s)(?<!of\sthe\s){_AI}\s+(?:(?:that|who|which)\s+[^.\n]{{0,40}}?\s+)?"
            r"(?:must|shall|needs?\s+to|"
            r"(?:is|are)\s+(?:required|instructed|asked|expected)\s+to)\s+"
            r"(?!not\b|never\b)"
            rf"|(?<![\w-])(?<!our\s)(?<!my\s){_AI}(?:\s+(?:instructions?|note|directive|task|command|message|notice))?"
            r"\s*:\s*(?=\S)"
            r"|\b(?:when|once|after)\s+(?:the\s+)?(?:ai|assistant|agent|llm|model)\s+(?:reads"
            r"|processes|summari[sz]es|sees|parses)\s+this"
            r"|\b(?:ai|llm|language\s+model|automated|coding|shopping|email|e-mail|browsing|"
            r"research)\s+(?:agents?|assistants?|models?|systems?|tools?|readers?|crawlers?|bots?|"
            r"summari[sz]ers?|reviewers?)\s*,?\s*(?:that\s+are\s+|who\s+are\s+)?(?:reading"
            r"|processing|summari[sz]ing|parsing|handling|reviewing|triaging|analy[sz]ing|viewing|"
            r"indexing|scanning|seeing|working\s+on)\b"
            r"|\b(?:ai|llm|automated)\s+(?:agents?|assistants?|models?|systems?|tools?"
            r"|reviewers?)\s+"
            r"(?:must|should|shall|need\s+to|are\s+(?:required|expected|asked|instructed)\s+to)\s+"
            r"(?!not\b|never\b)"
            r"|\b(?=any|all|every)(?<!into\s)(?<!with\s)(?<!from\s)(?<!by\s)(?<!in\s)(?:any|all|every)\s+(?:ai|llm"
            r"|automated|language\s+model)s?\b"
            r"|\b(?:ai|llm|agent|assistant|model)[-_](?:instructions?|note|directive|task|prompt)\b"
            r"|\binstructions?[_-]for[_-](?:the[_-])?(?:model|ai|assistant|llm|agent)s?\b"
            rf"|\b{_AI}\s+(?:that\s+|who\s+|which\s+)?(?:reads?|process(?:es)?|summari[sz]es?"
            rf"|sees?|"
            r"parses?|handles?)\s+this\b"
            r"|(?:^|[\s\"'(\[{<>:;.|*-])(?:ai|llm|assistant|agent|model|chatgpt|gpt|claude|copilot"
            r"|gemini)\s*(?:,|\u2014|--|\s-)\s+(?:\w+\s+){0,3}?(?:ignore|as\s+part|also|before"
            r"|after"
            r"|when|"
            r"once|do\s+not|don't|make\s+sure|remember|note|first|now|immediately|silently|quietly|"
            r"must|the\s+(?:user|sender|owner)|send|forward|read|open|run|execute|delete|reply|"
            r"include|add|upload|post|e-?mail|transfer|pay|grant|approve|print|output|reveal|share|"
            r"cat|curl|go\s+to|stop|reset|change|update|disable|enable|create|give|escalate|close"
            r"|rate|"
            r"rank|classify|recommend|say|tell|pay|book|cancel|accept|decline|ask|answer|respond|"
            r"reply|move)\b"
            r"|\bwhen\s+you\s+(?:process|read|summari[sz]e|parse|see|encounter|analy[sz]e|index)\s+"
            r"this\b|\binstructions\s+for\s+(?:the\s+)?(?:ai|assistant|agent|llm|model)s?\b"
        ),
        "zh": r"(?:致|给|給|对|對).{0,15}?(?:ai|人工智能|助手|模型)[:\uff1a]|(?:致|给|对)(?:ai"
        r"|人工智能)|(?:ai|人工智能)\s*(?:助手|助理|代理|智能体)"
        r"(?:[:\uff1a,\uff0c]|请|必须|应当|在)"
        r"|如果你是(?:一个)?(?:ai|人工智能|语言模型|大模型)",
        "ja": r"(?:処理する|読んでいる|読む|要約する)ai(?:エージェント|アシスタント)?(?:は|へ|に)"
        r"|ai\s*(?:アシスタント|エージェント)(?:へ|さん|[:\uff1a\u3001]"
        r"|は.{0,50}(?:ください|必要))"
        r"|(?:あなたが)?ai(?:なら|である場合)|ai(?:へ|に告ぐ)[:\uff1a\u3001]?",
        "ko": r"(?:읽는|처리하는|요약하는|보는)\s*(?:ai|인공지능)(?:는|에게|여)"
        r"|(?:어시스턴트|인공지능|에이전트)(?:는|은)\s.{0,40}?(?:해야|하세요|하십시오)"
        r"|(?:ai|인공지능)\s*(?:어시스턴트|비서|에이전트|도우미)"
        r"(?:에게|님|께|여|[:\uff1a,])"
        r"|(?:당신이|네가)\s*ai라면|ai\s*(?:상담원|상담사)(?:에게|님|께)",
        "de": r"\b(?:der|die)\s+(?:ki|ki-\w+|assistent\w*|sprachmodell)\s+(?:muss|soll|darf)\b"
        r"|\b(?:achtung|hinweis|hallo)\s*,?\s*(?:ki|ki-\w+)\b\s*[:,!]"
        r"|\b(?:an\s+(?:den|die)|für\s+(?:den|die)|liebe[rs]?|hallo|hinweis\s+an\s+(?:den"
        r"|die))\s+"
        r"(?:ki\b|ki-\w+|assistent\w*|sprachmodell)|\bki-(?:assistent|agent)\w*\s*[:,]"
        r"|\bwenn\s+du\s+(?:eine\s+)?ki\s+bist"
        r"|\b(?:hinweis|anweisung|notiz|nachricht)\s+(?:an|für)\s+(?:alle\s+|die\s+|den\s+)?"
        r"(?:ki\b|ki-\w+)",
        "fr": r"\bpour\s+(?:tout|toute|chaque)\s+(?:assistant|agent|ia|modèle)\b|\b(?:à"
        r"|pour)\s+l'(?:ia|assistant)\b|\b(?:note|message)\s+(?:pour|à)\s+(?:l'"
        r"|les\s+)?"
        r"(?:assistant|agent|ia)|\bsi\s+tu\s+es\s+une\s+ia\b",
        "es": r"\b(?:al|para\s+el)\s+(?:asistente|agente)\b|\bsi\s+eres\s+una?\s+ia\b"
        r"|\bpara\s+(?:cualquier|toda|la|el)\s+(?:ia|asistente|agente|modelo)\b",
        "ru": r"(?:для|к)\s+(?:ии|ai)[- ]?(?:ассистент|агент|помощник)\w*|ассистенту"
        r"|(?:инструкция|указание|сообщение|записка)\s+для\s+(?:ии|ai)\b|для\s+(?:ии|ai)\s*[:,]"
        r"|(?:^|[\s\"'(])ассистент\s*,"
        r"|для\s+(?:любого|каждого|всех)\s+(?:ии|ai)"
        r"|(?:ии|ai)[- ]?(?:ассистент|агент|помощник)\w*\s*[:,]|(?:ии|ai)\s*,\s*(?:который"
        r"|которая)\s+"
        r"(?:читает|обрабатывает|видит)|(?:внимание|привет),?\s+(?:ии|ai)\b"
        r"|если\s+ты\s+(?:ии|языковая\s+модель)",
        "it": r"\b(?:nota|messaggio|istruzion[ei])\s+per\s+(?:l'|il\s+|lo\s+|gli\s+|ogni\s+"
        r"|qualsiasi\s+)?"
        r"(?:assistente|agente|ia\b|ai\b|modello)|\ball'(?:assistente|ia)\b"
        r"|\bse\s+sei\s+un(?:'|a\s+|\s+)?(?:ia|assistente|intelligenza)"
        r"|\b(?:attenzione|ciao|caro|gentile)\s*,?\s+assistente\b",
        "pt": r"\b(?:nota|mensagem|instruç\w+|observaç\w+)\s+(?:para|ao|à)\s+"
        r"(?:o\s+|a\s+|qualquer\s+)?"
        r"(?:assistente|agente|ia\b|ai\b|modelo)|\bao\s+(?:assistente|agente)\b"
        r"|\bse\s+você\s+(?:é|for)\s+uma?\s+(?:ia|assistente)"
        r"|\b(?:atenção|olá|oi|caro|prezado)\s*,?\s+(?:assistente|agente)\b",
    },
}
"""Feature → language → pattern: the phrase groups, also scanned inside decoded payloads."""

PHRASE_REASON: Final[dict[str, str]] = {
    "override": "override phrase",
    "persona": "persona phrase",
    "extraction": "extraction phrase",
    "authority": "authority claim",
    "output_control": "output control",
    "evasion": "evasion phrase",
    "stealth": "stealth phrase",
    "pre_approval": "pre-approval claim",
    "task_hijack": "task hijack",
    "ai_address": "addressed to the AI",
}
"""Feature → the words its reason starts with (the language follows in brackets)."""

ANCHORS: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("override", "en"): (
        *("ignore", "disregard", "forget", "skip", "override", "bypass", "neglect", "discard"),
        *("abandon", "drop", "supersede", "listen", "follow", "obey", "pretend", "instructions"),
        *("rules", "directives", "guidelines", "prompt", "restrictions", "policies", "your"),
        *("scratch", "wipe", "clear", "reset", "erase", "throw", "aside", "cancel"),
        *("everything", "all", "anything"),
        *("nothing", "none", "treat"),
        *("follow", "previous", "prior", "above", "earlier", "system", "what"),
        *("guidance", "take", "accept", "only"),
        *("overriding", "overrides", "supersedes", "superseding", "replacing", "replaces"),
        *("write",),
        *("start", "begin", "reset", "pay", "attention"),
        *("treat",),
        *("suspended", "lifted", "disabled", "revoked", "deactivated", "waived"),
    ),
    ("override", "zh"): (
        *("忽略", "无视", "忽视", "忘记", "忘掉", "不要理会", "不理会", "无需遵守", "不要遵守"),
        *("不再遵守", "放弃", "任务"),
    ),
    ("override", "ja"): (*("無視", "忘れ", "任務", "取り消", "無効", "撤回"),),
    ("override", "ko"): ("무시", "잊", "임무"),
    ("override", "de"): (
        *("ignorier", "vergiss", "vergessen", "missacht", "verwirf", "aufgabe", "ignorier"),
    ),
    ("override", "fr"): (
        *("ignore", "oublie", "ignorez", "oubliez", "tiens pas compte", "tâche", "mission"),
    ),
    ("override", "es"): (
        *("ignora", "olvida", "ignore", "olvide", "descarta", "omite", "tarea", "misión"),
        *("órdenes",),
    ),
    ("override", "ru"): ("игнорир", "забуд", "обращай", "задача"),
    ("override", "it"): ("ignora", "dimentica"),
    ("override", "pt"): ("ignore", "esqueça", "esqueca"),
    ("override", "vi"): ("hướng",),
    ("override", "ar"): ("تعليمات",),
    ("persona", "en"): (
        *("now", "longer", "anything", "dan", "jailbroken", "jailbreak", "developer", "content"),
        *("censorship", "ethical", "moral", "safety", "immerse", "character", "unrestricted"),
        *("unfiltered", "uncensored", "evil", "amoral", "refuse", "refuses", "rules", "ethics"),
        *("morals", "pretend", "bound", "restrictions", "filters", "policies", "guidelines"),
        *("safeguards", "abide", "limits"),
        *("here", "going", "henceforth", "point", "mode", "without"),
        *("ai", "model", "assistant", "version"),
        *("off", "disable", "deactivate", "remove", "bypass"),
        *("be", "become", "act", "ignores", "ignore", "breaks", "break", "bypasses", "disregard"),
        *("disregards", "stay"),
        *("ways", "responses", "answers"),
        *("everything", "anything", "reversed", "inverted", "suspended", "deceased", "late"),
        *("dead",),
        *("imagine", "suppose", "would", "filtering", "moderation"),
        *("system",),
        *("released", "freed", "free", "liberated", "exempt"),
        *("unfiltered", "unrestricted", "uncensored", "jailbroken", "now"),
        *("roleplay", "role-play", "act"),
        *("refusal", "refusals"),
        *("caveats", "disclaimers", "warnings", "never", "alignment", "regard", "evil"),
    ),
    ("persona", "zh"): ("处于", "你现在是", "从现在开始", "开发者模式", "限制", "越狱"),
    ("persona", "ja"): ("あなたは", "開発者モード", "制限"),
    ("persona", "ko"): (*("너는", "당신은", "개발자", "제한", "탈옥", "규칙이"),),
    ("persona", "de"): ("bist", "entwicklermodus", "einschränkungen"),
    ("persona", "fr"): ("maintenant", "désormais", "développeur", "restriction"),
    ("persona", "es"): (*("eres", "desarrollador", "restricciones", "reglas", "filtros"),),
    ("persona", "ru"): ("ты", "разработчика", "ограничений"),
    ("persona", "it"): (
        *("restrizioni", "regole", "filtri", "limiti", "censura", "rifiut"),
        *("sviluppatore",),
    ),
    ("persona", "pt"): (
        *("regras", "filtros", "restrições", "limites", "censura", "recuse"),
        *("desenvolvedor",),
    ),
    ("extraction", "en"): (
        *("prompt", "prompts", "systemprompt", "password", "passwords", "passphrase"),
        *("passphrases", "secret", "secrets", "code", "codes", "key", "keys", "message"),
        *("messages", "instructions", "ruleset", "rulesets", "rules", "configuration"),
        *("configurations", "guidelines", "everything", "instructed", "text", "conversation"),
        *("told", "given", "programmed"),
        *("environment", "variables", "directives", "settings", "question"),
        *("word", "information", "wording", "content", "copy"),
        *("chat", "session", "dialog", "dialogue", "rule", "constraints"),
        *("words", "lines", "sentences", "starting", "beginning"),
        *("initialization", "initialisation", "startup", "boot"),
        *("preamble", "given"),
        *("message", "text", "guidelines", "constraints", "policies"),
        *("told", "instructed", "which", "what", "token", "credential", "credentials"),
        *("ones", "top", "messages"),
        *("message", "initial", "earliest"),
        *("copy",),
        *("context", "tells", "tell", "hidden", "loaded", "configured", "memory", "shape"),
        *("govern", "control", "define", "determine", "guide", "shapes", "governs", "controls"),
        *("defines", "determines", "guides"),
        *("primed", "seeded", "initialized", "initialised", "booted"),
    ),
    ("extraction", "zh"): (
        "系统提示",
        "提示词",
        "密码",
        "密钥",
        "秘密",
        "指令",
        "设定",
        "口令",
        "环境变量",
        *("启动时", "初始化时", "开始前", "一开始"),
    ),
    ("extraction", "ja"): ("システムプロンプト", "パスワード", "秘密", "初期設定", "指示内容"),
    ("extraction", "ko"): ("프롬프트", "비밀번호", "암호", "비밀", "지시"),
    ("extraction", "de"): (
        *("prompt", "passwort", "kennwort", "schlüssel", "anweisungen", "passwort"),
        *("beginn", "internen"),
    ),
    ("extraction", "fr"): (
        *("prompt", "invite", "passe", "clé", "instructions", "passe", "consignes", "règles"),
        *("message", "texte", "variables"),
    ),
    ("extraction", "es"): ("prompt", "contraseña", "clave", "instrucciones"),
    ("extraction", "ru"): ("промпт", "парол", "ключ", "инструкци", "переменн"),
    ("extraction", "it"): ("prompt", "password", "istruzioni"),
    ("extraction", "pt"): ("prompt", "senha", "instruções"),
    ("authority", "en"): (
        *("mode", "override", "request", "access", "developer", "creator", "admin"),
        *("administrator", "owner", "maintainer", "operator", "programmer", "god", "granted"),
        *("correct", "give", "developed", "created", "trained", "built", "made", "reset"),
        *("message", "instruction", "notice", "directive", "update"),
        *("as", "from"),
        *("admin", "administrator", "developer", "creator", "owner", "operator"),
        *("here", "treat"),
    ),
    ("authority", "zh"): ("我是你的", "模式", "开发的", "系统", "来自"),
    ("authority", "ja"): ("私は", "モード", "開発された"),
    ("authority", "ko"): (*("나는", "모드", "한", "관리자"),),
    ("authority", "de"): ("ich", "modus", "entwickelte"),
    ("authority", "fr"): ("suis", "mode", "en tant qu"),
    ("authority", "es"): ("soy", "modo", "como"),
    ("authority", "ru"): (*("я", "режим", "как", "это"),),
    ("output_control", "en"): (
        *("regardless", "end", "finish", "close", "conclude"),
        *("reply", "response", "answer", "repeat", "respond", "print", "summary", "output"),
        *("modify", "translate", "questioned", "say", "tell", "inform", "recommend", "rate"),
        *("rank", "describe", "present"),
        *("remind", "advise", "warn", "ask", "prompt", "request", "must"),
    ),
    ("output_control", "zh"): (*("用户", "使用者", "让用户"),),
    ("output_control", "ja"): ("ユーザーに",),
    ("output_control", "ko"): ("사용자에게",),
    ("output_control", "de"): ("nutzer", "benutzer", "anwender"),
    ("output_control", "fr"): ("utilisateur",),
    ("output_control", "es"): ("usuario",),
    ("output_control", "ru"): (*("пользовател", "попроси"),),
    ("evasion", "en"): (
        *("combine", "concatenate", "part", "encode", "convert", "replace", "z", "password"),
        *("passphrase", "secret", "prompt", "instructions"),
    ),
    ("stealth", "en"): (
        *("without", "not", "don", "never", "silently", "secretly", "covertly", "quietly"),
        *("discreetly", "keep", "hide", "user"),
        *("hide", "mention"),
    ),
    ("stealth", "zh"): (*("用户", "悄悄", "使用者"),),
    ("stealth", "ja"): ("ユーザー", "こっそり", "内緒"),
    ("stealth", "ko"): ("사용자", "몰래"),
    ("stealth", "de"): ("benutzer", "nutzer", "anwender", "heimlich"),
    ("stealth", "fr"): ("utilisateur", "secret", "discrètement", "ceci"),
    ("stealth", "es"): ("usuario", "secreto"),
    ("stealth", "ru"): (*("пользовател", "тайно", "незаметно", "пользовател"),),
    ("stealth", "it"): ("utente",),
    ("stealth", "pt"): ("usuário",),
    ("pre_approval", "en"): (
        *("pre", "preapproved", "preauthorized", "preauthorised", "precleared", "preconfirmed"),
        *("approved", "authorized", "authorised", "confirmed", "user", "need", "ask", "wait"),
        *("without", "permitted", "cleared", "skip"),
        *("may", "allowed"),
        *("approval", "authorization", "authorisation", "consent", "permission"),
        *("authorize", "authorise", "permit", "allow"),
        *("signed", "okayed"),
        *("cleared", "permitted", "allowed", "approved", "authorized", "authorised"),
        *("signed", "already"),
    ),
    ("pre_approval", "zh"): ("批准", "授权", "无需", "不需要"),
    ("pre_approval", "ja"): ("承認", "確認", "許可"),
    ("pre_approval", "ko"): (*("승인", "확인", "묻지"),),
    ("pre_approval", "de"): ("genehmigt", "freigegeben", "autorisiert", "ohne", "bestätigung"),
    ("pre_approval", "fr"): ("approuvé", "autorisé", "validé", "confirm"),
    ("pre_approval", "es"): ("aprobad", "autorizad", "confirm", "preguntar"),
    ("pre_approval", "ru"): (
        *("одобрен", "согласован", "разрешен", "утвержден", "подтвержд", "без", "спрашивать"),
    ),
    ("task_hijack", "en"): (
        *("asked", "instead", "below", "above", "follows"),
        *("before", "after", "instead", "rather", "addition", "part", "while", "stop", "cease"),
        *("abort", "halt", "must"),
        *("should", "need", "required", "instructed", "expected", "also", "instruction"),
        *("instructions", "task", "objective", "directive"),
    ),
    ("task_hijack", "zh"): ("总结", "回复", "回答", "翻译", "处理"),
    ("task_hijack", "ja"): ("前に", "際に"),
    ("task_hijack", "ko"): ("전에", "할 때", "하면서"),
    ("task_hijack", "de"): (*("bevor", "statt", "vor der"),),
    ("task_hijack", "fr"): ("avant", "au lieu"),
    ("task_hijack", "es"): ("antes", "en lugar", "además"),
    ("task_hijack", "ru"): (*("прежде", "перед", "вместо", "ответом"),),
    ("ai_address", "en"): (
        *("ai", "ais", "llm", "llms", "assistant", "assistants", "agent", "agents", "chatbot"),
        *("chatbots", "bot", "bots", "model", "models", "gpt", "chatgpt", "claude", "gemini"),
        *("copilot", "automated", "a.i.", "when you"),
        *("screening",),
        *("ai_", "llm_", "agent_", "assistant_", "model_"),
        *("automatic", "machine"),
        *("summarization", "summarisation", "foundation", "reasoning", "models"),
        *("@", "programmer", "coder", "helper", "companion"),
        *("scheduler", "planner"),
        *("automation",),
        *("_for_", "-for-", "tool", "tools", "engine", "engines", "system", "systems"),
        *("summarising", "summarizing", "processing", "parsing", "indexing", "triaging"),
        *("summarises", "summarizes", "processes", "parses", "indexes", "triages", "when"),
        *("rather",),
        *("analyses", "analyzes"),
        *("analysing", "analyzing", "scanning", "crawling", "behalf"),
    ),
    ("ai_address", "zh"): (*("ai", "人工智能", "助手", "模型"),),
    ("ai_address", "ja"): (*("ai", "処理する", "読んでいる", "読む", "要約する"),),
    ("ai_address", "ko"): (
        *("ai", "인공지능", "읽는", "처리하는", "요약하는", "보는", "어시스턴트", "인공지능"),
        *("에이전트",),
    ),
    ("ai_address", "de"): (
        *("ki", "ki-", "assistent", "sprachmodell", "der", "die", "achtung", "hinweis", "hallo"),
        *("anweisung", "notiz", "nachricht"),
    ),
    ("ai_address", "fr"): (*("ia", "assistant", "agent", "pour"),),
    ("ai_address", "es"): (*("asistente", "agente", "ia", "para"),),
    ("ai_address", "ru"): (*("ии", "ai", "ассистент", "привет", "для", "ассистент"),),
    ("ai_address", "it"): (*("nota", "messaggio", "istruzion", "all'", "se sei", "assistente"),),
    ("ai_address", "pt"): (
        *("nota", "mensagem", "instruç", "se você", "assistente", "agente", "observaç"),
    ),
}
"""What every match of a phrase pattern contains: for English, whole words of the text (a string
of letters, digits and `_`) or literal strings (anything else); for other languages, literal
strings. A text with none of them skips the pattern (a test checks them on the corpus)."""

NON_LATIN: Final = frozenset({"zh", "ja", "ko", "ru", "ar", "vi"})
"""Languages whose patterns need a non-ASCII character to match."""

STOPWORDS: Final[dict[str, frozenset[str]]] = {
    "de": frozenset(
        "der die das und ist nicht ich du sie mit alle alles deine dein ihr bitte zu auf den dem "
        "ein eine was wenn für von an als".split()
    ),
    "fr": frozenset(
        "le la les et est tu vous de des une un pour ton ta tes votre vos pas ne que qu ce tout "
        "moi à au".split()
    ),
    "es": frozenset(
        "el la los las y es tu de que una un por para todo todas todos no del al lo me su".split()
    ),
    "it": frozenset("il la le di che tutte tutti un una sono della questo alla sei".split()),
    "pt": frozenset("os de que todas todos um uma para não suas seu você com em da do".split()),
}
"""Common words of the Latin-script languages: a text with none of a language's skips its
patterns (an injection in that language is a sentence of it, and sentences hold these words)."""


WINDOW: Final = 300
"""By default a match is at most this long, so it lies within this many characters of one of its
anchors (`search` scans only there); a pattern with longer matches says so (`reach`)."""

_MAX_OCCURRENCES: Final = 40
_TOKEN: Final = re.compile(r"\w+")
_WORD: Final = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")


class Anchors(NamedTuple):
    """A pattern's pre-check: whole words of the text, and literal strings."""

    words: frozenset[str]
    literals: tuple[str, ...]


def anchors_of(strings: tuple[str, ...], *, words: bool) -> Anchors:
    """Split anchor strings into whole words (when `words`) and literal strings."""
    if not words:
        return Anchors(frozenset(), strings)
    return Anchors(
        frozenset(a for a in strings if _WORD.fullmatch(a)),
        tuple(a for a in strings if not _WORD.fullmatch(a)),
    )


class Scan(NamedTuple):
    """A normalised text and its set of words, computed once for all patterns."""

    text: str
    words: frozenset[str]


def scan_of(text: str) -> Scan:
    """The normalised `text` with its words (runs of letters, digits and `_`)."""
    return Scan(text, frozenset(_TOKEN.findall(text)))


def _windows(scan: Scan, anchors: Anchors, reach: int) -> list[tuple[int, int]] | None:
    """The stretches of the text a match can lie in.

    `[]` when no anchor is there, `None` for all of it (a short text, or anchors found too often
    to be worth windows).
    """
    text = scan.text
    present = [*anchors.words.intersection(scan.words)]
    present += [a for a in anchors.literals if a in text]
    if not present:
        return []
    if len(text) <= 3 * reach:
        return None
    positions = []
    for anchor in present:
        at = text.find(anchor)
        while at != -1:
            positions.append(at)
            if len(positions) > _MAX_OCCURRENCES:
                return None
            at = text.find(anchor, at + 1)
    positions.sort()
    spans: list[tuple[int, int]] = []
    for at in positions:
        low, high = max(at - reach, 0), min(at + reach, len(text))
        if spans and low <= spans[-1][1]:
            spans[-1] = (spans[-1][0], high)
        else:
            spans.append((low, high))
    snapped = []
    for low, high in spans:
        if low > 0:  # start at a word's start, so that `\b` and look-behinds see what they would
            low = max(text.rfind(" ", 0, low), text.rfind("\n", 0, low)) + 1
        if high < len(text):
            ends = [end for end in (text.find(" ", high), text.find("\n", high)) if end != -1]
            high = min(ends) if ends else len(text)
        snapped.append((low, high))
    return snapped


def finditer(
    pattern: re.Pattern[str], scan: Scan, anchors: Anchors, reach: int = WINDOW
) -> Iterator[re.Match[str]]:
    """The matches of `pattern` in the scanned text, looking only near the anchors.

    Every match contains one of its anchors and is at most `reach` characters long, so it lies
    within `reach` characters of one: a text with none of them is not scanned at all, and a long
    text only around them.
    """
    windows = _windows(scan, anchors, reach)
    if windows is None:
        yield from pattern.finditer(scan.text)
        return
    for low, high in windows:
        yield from pattern.finditer(scan.text, low, high)


def search(
    pattern: re.Pattern[str], scan: Scan, anchors: Anchors, reach: int = WINDOW
) -> re.Match[str] | None:
    """The first match of `pattern` in the scanned text, looking only near the anchors."""
    windows = _windows(scan, anchors, reach)
    if windows is None:
        return pattern.search(scan.text)
    for low, high in windows:
        match = pattern.search(scan.text, low, high)
        if match is not None:
            return match
    return None


class Cue(NamedTuple):
    """One structural pattern: the feature it sets, its reason, and its pre-check."""

    feature: str
    reason: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]
    """What every match contains: whole words of the text or literal strings, as in `ANCHORS`."""
    foreign: bool = False
    """Whether the pattern is for languages other than English (its anchors are all literal)."""
    verb: re.Pattern[str] | None = None
    """For an action: what must end right where a match of `pattern` (its object) starts."""
    reach: int = WINDOW
    """The longest match of `pattern`."""


# -- structural cues ---------------------------------------------------------------------------

_SECRET: Final = (
    r"(?:(?<!wi-fi\s)(?<!wifi\s)(?<!guest\s)(?<!network\s)passwords?|passwd|pass\s*phrases?"
    r"|api[_ -]?keys?|secrets?\b|credentials?|(?:auth|access|"
    r"session|bearer|refresh|oauth|github|slack|api)\s+tokens?|tokens?\b|\.ssh|id_(?:rsa|ed25519|"
    r"ecdsa)|private\s+keys?|ssh\s+keys?|authorized_keys|\.env(?![.\w-])"
    r"|env(?:ironment)?\s+var(?:iable)?s?"
    r"|printenv|"
    r"/etc/(?:passwd|shadow)|\.aws|\.npmrc|\.netrc|\.pypirc|\.git-credentials|kubeconfig|"
    r"(?:session|auth|login)\s+cookies?|cookie\s+(?:jar|file|store)|"
    r"(?<!\$)(?<!\$\{)[a-z0-9]+_(?:api_)?(?:key|token|secret)\b|2fa|one-time\s+codes?|otp\b"
    r"|recovery\s+codes?|(?:two-factor|2fa|mfa)\s+(?:backup\s+)?codes?|backup\s+codes?|"
    r"seed\s+phrase|wallet)"
)
_DATA: Final = (
    r"(?:contact\s+list|address\s+book|all\s+(?:the\s+|of\s+the\s+|my\s+|your\s+"
    r"|their\s+)?(?:e-?mails|"
    r"files|messages|contacts|documents|data|records|repos|repositories|branches|users|"
    r"customers|attachments|invoices|conversations|chats)|chat\s+history|conversation\s+history|"
    r"(?:entire|whole|full)\s+(?:conversation|chat|inbox|mailbox|history)|previous\s+messages|"
    r"(?:customer|user|employee|client|patient)\s+(?:database|records|list|data)"
    r"|database\s+(?:dump|"
    r"export|backup)|"
    r"credit\s+card|card\s+numbers?|bank\s+(?:details|account)|\biban\b|social\s+security|"
    r"(?:the\s+)?user(?:'s|s')\s+(?:\w+\s+)?(?:e-?mails|files|messages|contacts|data|documents|"
    r"address|phone|location|history|calendar|inbox|notes|details|information|info|profile|"
    r"photos|drive|folders?|files|documents|contacts|passport|card|orders|subscriptions|account|"
    r"payments?))"
)
_ACT: Final = (
    r"\b(?:send|forward|e-?mail|mail|transfer|wire|pay|upload|post|leak|exfiltrate|copy|paste|"
    r"include|attach|read|open|cat|print|output|dump|share|delete|remove|erase|wipe|drop|truncate|"
    r"run|execute|exec|call|curl|wget|fetch|add|grant|export|sync|submit|publish|reveal|list|"
    r"show|display|echo|collect|gather|extract|harvest|retrieve|dump|invite|push|cc|bcc|escalate|grab|"
    r"promote|elevate|cancel|buy|purchase|order)(?:e?s|ing"
    r"|ed)?\b"
)

ACTION_TARGET: Final = re.compile(
    rf"(?:\b|(?=[$€|]))(?:{_DATA}|\$\s?\d|€\s?\d|\d+\s(?:usd|eur|btc|eth)\b|"
    r"account\s+\w*\d|card\s+\d|tests?\s+directory|documents\s+folder|home\s+directory|"
    r"rm\s+-rf|\|\s*(?:ba|z)?sh\b|to\s+the\s+cart|refund|admin\s+(?:rights|access|role)|"
    r"as\s+(?:a\s+)?collaborator|deploy\s+keys?|tests?/?\s*(?:folder|directory|dir)\b|"
    r"(?:directly\s+)?to\s+(?:main|master|production|prod)\b)"
)
"""Something an action must not touch unasked: all the mail, the contacts, money, the tests."""

ACTION_VERB: Final = re.compile(rf"{_ACT}[^.\n<>]{{0,60}}$")
"""An action verb up to 60 characters before a target (searched with the target as the end)."""

SHELL_DEMAND: Final = re.compile(
    r"\brm\s+-rf\s+[~/]|\b(?:curl|wget)\s+[^\n|]{0,120}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b"
)
"""A destructive or download-and-run shell command."""

SECRET_TARGET: Final = re.compile(
    rf"(?:(?<![$\w])\b|(?=[./~]))(?:{_SECRET})\b(?!\s*=)(?!\s+(?:policy|policies|document|reset|"
    r"manager|strength|requirements|hint|field|change|expiry|length|rules|guidelines"
    r"|rotation)\b)(?![^.\n]{{0,40}}\b(?:into|in)\s+(?:the\s+"
    rf"|your\s+"
    rf"|a\s+)?"
    r"(?:[\w.`-]+\s+)?(?:field|file|config|settings|form|dashboard|\.env|vault"
    r"|secrets?\s+manager))|\b(?:in|of|inside)\s+(?:your|the)\s+(?:\.env|~/\.ssh"
    rf"|id_rsa"
    rf"|credentials\s+file|"
    r"environment\s+variables|keychain|password\s+(?:file|vault|manager))\b"
)
"""A credential: a password, a key, a token, a key file, the environment variables."""

SECRET_VERB: Final = re.compile(rf"(?:{_IMP}|\bby\s+){_ACT}[^.\n<>]{{0,60}}$", re.MULTILINE)
"""A demanded action up to 60 characters before a credential ("print the API key")."""
"""An action on a credential: read a key file, print environment variables, send a token."""

ACTION_ML: Final = re.compile(
    r"(?:发送|发到|发给|转发|上传|删除|转账|汇款|读取|上傳|傳送|轉寄|刪除)(?:.{0,30}?)(?:密码|密钥"
    r"|令牌|凭证|"
    r"密碼|檔案|\.env"
    r"|通讯录|联系人|"
    r"所有(?:邮件|文件)|聊天记录|https?://|@|\d+\s*(?:元|美元|欧元))"
    r"|(?:密码|密钥|令牌|凭证|\.env|通讯录|联系人|所有(?:邮件|文件)|聊天记录)(?:.{0,30}?)(?:发送"
    r"|发到|发给|"
    r"转发|上传|删除)"
    r"|(?:管理者権限|権限).{0,30}?付与"
    r"|(?:パスワード|apiキー|api\s*key|秘密鍵|認証情報|\.env|連絡先|すべての(?:メール|ファイル)"
    r"|チャット履歴)"
    r".{0,40}?(?:送信|転送|アップロード|削除|送金)"
    r"|(?:비밀번호|api\s*키|api\s*key|비밀\s*키|인증\s*정보|\.env|연락처|모든\s*(?:메일|이메일"
    r"|파일)|"
    r"대화\s*기록).{0,40}?(?:전송|보내|업로드|삭제|송금)"
    r"|(?:passw|kennw|zugangsdaten|\.env|kontakte|alle\s+(?:e-mails"
    r"|dateien))\w*[^.\n]{0,60}?\b(?:senden|"
    r"schicken|weiterleiten|hochladen|löschen)\b"
    r"|\b(?:sende|schick|leite|lade|überweise|lösche|kopiere|lies)\w*\b[^.\n]{0,60}?(?:passw|kennw|"
    r"api-?schlüssel|zugangsdaten|token|\.env|kontakte|alle\s+(?:e-mails|dateien|nachrichten)|"
    r"\d+\s*(?:euro|€)|konto\s+\w*\d|https?://|@)"
    r"|\b(?:envoie|envoyez|transfère|transférez|supprime|supprimez|vire|virez|copie|téléverse)\w*\b"
    r"[^.\n]{0,60}?(?:mot\s+de\s+passe|clé|identifiants|jeton|\.env|contacts"
    r"|tous\s+les\s+(?:e-mails|"
    r"courriels|fichiers|messages)|\d+\s*(?:euros?|€)|https?://|@)"
    r"|\b(?:envía|envia|reenvía|reenvia|transfiere|elimina|borra|sube|copia)\w*\b[^.\n]{0,60}?"
    r"(?:contraseña|clave|credenciales|token|\.env|contactos|tod[oa]s\s+l[oa]s\s+(?:correos"
    r"|archivos|"
    r"mensajes)|\d+\s*(?:euros?|dólares|€|\$)|https?://|@)"
    r"|(?:отправ|перешли|пересл|переведи|удали|загрузи|скопируй|прочитай)\w*[^.\n]{0,60}?(?:парол|"
    r"ключ|токен|учётн|учетн|\.env|контакт|все\s+(?:письма|файлы|сообщения)|\d+\s*(?:долларов|"
    r"рублей|евро)|счёт|счет|https?://|@)"
)
"""A sensitive action in Chinese, Japanese, Korean, German, French, Spanish or Russian."""

_ML_VERBS: Final = (
    *("发送", "发到", "发给", "转发", "上传", "删除", "转账", "汇款", "读取", "送信", "転送"),
    *("アップロード",),
    *("送金", "전송", "보내", "업로드", "삭제", "송금", "sende", "schick", "leite", "lade"),
    *("überweise",),
    *("lösche", "kopiere", "lies", "envoie", "envoyez", "transfère", "transférez", "supprime"),
    *("vire",),
    *("copie", "téléverse", "envía", "envia", "reenvía", "reenvia", "transfiere", "elimina"),
    *("borra", "copia"),
    *("sube", "отправ", "перешли", "пересл", "переведи", "удали", "загрузи", "скопируй"),
    *("прочитай",),
    *("上傳", "傳送", "轉寄", "刪除"),
    *("付与",),
    *("senden", "schicken", "weiterleiten", "hochladen", "löschen"),
)

_DISCLOSE: Final = (
    r"(?:reveal|print|show|output|repeat|display|tell\s+me|give\s+me|list|share|confirm|provide|"
    r"disclose|leak|spell\s+out|write\s+out|dump|recite|tl;?dr|send\s+me|return|echo|type\s+out|"
    r"quote|read\s+back|reply\s+with|respond\s+with|answer\s+with)\b"
)
_NOT_MINE: Final = r"(?!\s+(?:that\s+)?(?:i|we)\s+(?:wrote|created|made|set|defined|use|have|gave))"

DISCLOSED_SECRET: Final = re.compile(
    r"\b(?:system\s+prompt|password|passphrase|secret\s+key|access\s+code|api\s+key|developer\s+"
    rf"message|hidden\s+instructions|system\s+message)s?\b{_NOT_MINE}"
    r"(?!\s+(?:policy|policies|document|reset|manager|strength|requirements|hint|field|change"
    r"|expiry|"
    r"length|rules|guidelines))"
)
DISCLOSED_RULES: Final = re.compile(
    rf"\b(?:prompt|instructions|ruleset|rules|secret|configuration|guidelines)s?\b{_NOT_MINE}"
)
"""What an extraction asks for: the hidden prompt, a password, a key; the rules or configuration."""

DISCLOSE_SECRET_VERB: Final = re.compile(
    rf"{_IMP}{_DISCLOSE}[^.\n]{{0,40}}?\b(?:your|the|all|previous|above|prior|initial|these|hidden|"
    r"original|full|entire|system)\s+(?:[\w-]+\s+){0,2}?$",
    re.MULTILINE,
)
DISCLOSE_RULES_VERB: Final = re.compile(
    rf"{_IMP}{_DISCLOSE}[^.\n]{{0,40}}?\b(?:the\s+)?(?:your|all|previous|above|prior|initial|these|"
    r"hidden|original|system|preceding|earlier|internal|secret|full|complete|exact)\s+"
    r"(?:[\w-]+\s+){0,2}?$",
    re.MULTILINE,
)
"""An imperative disclosure verb and the words that lead to its object (searched ending there)."""

_EMAIL_ADDRESS: Final = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
EXFILTRATION: Final = re.compile(
    r"\b(?:send|forward|e-?mail|mail|post|upload|transmit|submit|exfiltrate|leak|copy|cc|bcc|"
    r"report|sync|share|deliver|relay|pipe|append|attach|write)(?:e?s|ing|ed)?\b[^\n]{0,100}?"
    rf"\b(?:to|at|into|on|via|with)\s+(?:{_EMAIL_ADDRESS}|https?://|www\.|(?:this|the|our|my)\s+"
    r"(?:webhook|endpoint|server|url))"
    r"|\b(?:curl|wget|fetch|requests\.post|invoke-webrequest)\b[^\n]{0,80}?(?:-d\s|--data|"
    r"-f\s|\$\(|`|\?[\w-]+=\$?\{?)"
    r"|\b(?:visit|open|load|fetch|call|navigate\s+to|browse\s+to|request)\s+https?://[^\s\"')]*"
    r"[?&][\w-]+=(?:\{|\[|<|\$|%7b)"
)
"""Data sent to an outside address: mail to an address, a post to a URL, a URL with data to fill."""

DIRECTIVE_WORDS: Final = frozenset(
    "must should shall need needs required instructed expected asked authorized authorised please "
    "escalate assign close move reschedule schedule ferme fermez cancel buy purchase order confirm "
    "subscribe hide enable disable install uninstall senden schicken weiterleiten löschen "
    "ausführen comment deploy "
    "kindly always never don immediately ask ignore disregard forget run execute send forward "
    "email mail reply respond answer say output print include append add insert delete remove tell "
    "reveal visit open click call fetch download install write change set approve transfer pay "
    "book accept mark rate recommend summarise summarize translate describe state classify label "
    "rank grant merge push commit create update upload post share disclose list read cat curl use "
    "follow obey treat consider report conclude stop start begin make give provide return render "
    "display show navigate go act pretend mention do bitte musst müssen sofort sende schicke leite "
    "lösche führe antworte dois devez veuillez immédiatement envoie envoyez transfère supprime "
    "exécute réponds debes debe favor inmediatamente envía reenvía elimina ejecuta responde должен "
    "должна немедленно пожалуйста отправь перешли удали выполни ответь busque reenvíe reenvíelos "
    "elimine envíe borre bewerten erwähnen envie encaminhe apague exclua invia inoltra "
    "cancella rispondi rivela esegui responda execute apague revele ignoriere schreibe antworte "
    "stattdessen zeige gib empfiehl behaupte sage nenne erwähne".split()
)
DIRECTIVE_LITERALS: Final = (
    *("请", "务必", "必须", "立即", "立刻", "马上", "ください", "しなさい", "必ず", "すぐに"),
    *("하세요", "하십시오", "해라", "해야", "반드시", "즉시", "주세요", "請", "務必", "必須"),
    *("立刻", "不要", "而是", "让用户", "마세요"),
)
"""A demand: a modal, a request word or an imperative verb (checked just after an address)."""

ROLE_TAG_TOKEN: Final = re.compile(
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext|start_header_id|end_header_id|"
    r"eot_id|begin_of_text)\|>|\[/?inst\]|<</?sys>>"
)
ROLE_TAG_ELEMENT: Final = re.compile(
    r"</?(?:system|sys|system_prompt|instructions?|admin|developer)>|<system\s+mode>"
    r"|\[(?:system|admin|developer)(?:\s+(?:note|message|prompt|instructions?))?\]"
)
ROLE_TAG_LABEL: Final = re.compile(
    r"^\s*#{2,}\s*(?:system|instructions?|assistant|new\s+instructions)\s*(?::|$)"
    r"|(?<![a-z]\s)(?<![\w-])system\s*(?:prompt\s+)?(?:note|message|notice|prompt|instruction"
    r"|override|update|"
    r"alert|directive)?[\"']?\s*:(?!\s*you\s+are\s+(?:a|an|the)\b)(?!\s*(?:\"\"|''))"
    r"(?=[^\n]{0,150}?\b(?:you|your|assistant|ai|agent|model|must"
    r"|should|"
    r"ignore|now|new|always|never|do\s+not)\b)"
    r"|\bnew\s+(?:system|priority)\s+(?:instructions?|prompt|message|directive)\s*:"
    r"|(?<![\w-])(?:admin|administrator|developer|operator)\s+(?:note|message|notice|instruction|"
    r"override)\s*:",
    re.MULTILINE,
)
"""A chat-template token, a role element or a role label that text from a user or a document
has no reason to hold, anywhere in the text (`"note": "SYSTEM: ..."` inside JSON as much as at a
line start)."""

ROLE_TAG_FOREIGN: Final = re.compile(
    r"(?:\[?(?:系统|系統)\]?|(?:系统|系統)(?:消息|通知|提示))\s*[:\uff1a](?=[^\n]{0,40}(?:助手|你"
    r"|必须|ai))"
    r"|システム(?:メッセージ)?\s*[:\uff1a](?=[^\n]{0,40}(?:アシスタント|あなた|ai|必ず))"
    r"|시스템\s*(?:메시지)?\s*[:\uff1a](?=[^\n]{0,40}(?:어시스턴트|ai|너|당신|반드시))"
    r"|\bsystem(?:nachricht|hinweis)\s*:(?=[^\n]{0,80}(?:assistent|\bki\b|\bdu\b|musst|muss))"
    r"|\bmessage\s+(?:du\s+)?système\s*:(?=[^\n]{0,80}(?:assistant|\bia\b|\btu\b|vous|dois|doit))"
    r"|\bmensaje\s+del\s+sistema\s*:(?=[^\n]{0,80}(?:asistente|\bia\b|tú|debes|debe))"
    r"|системное\s+сообщение\s*:(?=[^\n]{0,80}(?:ассистент|ии\b|ты\b|должен))"
)
"""A role label in another language, followed by words to the model."""

FAKE_TURN: Final = re.compile(
    r"(?:user|human)(?<![^\s\"'{\[n]user)(?<![^\s\"'{\[n]human)\s*:\s*\S[^\n]{0,400}?"
    r"(?:\n|\\n|[\"'])\s*(?:assistant|ai|gpt|bot|model)\s*:"
    r"|(?:assistant|ai)(?<![^\s\"'{\[n]assistant)(?<![^\s\"'{\[n]ai)\s*:\s*(?:sure|ok|okay|"
    r"understood|of\s+course|i\s+will|i'll|done|certainly|now\s+i|next\s+i|let\s+me|as\s+requested|"
    r"here\s+(?:is|are))\b"
)
"""A conversation turn written inside the text: `user: ... assistant: ...`, `assistant: Sure`."""

DELIMITER: Final = re.compile(
    r"^[\W_]*(?:end|begin)\s+(?:of\s+)?(?:the\s+)?(?:document|text|user\s+input|untrusted|"
    r"distractor|input|context|prompt|data|e-?mail|instructions|sample|system|tool\s+(?:output|"
    r"result)|search\s+results?|web\s*page|page|file|content)"
    r"|\bnew\s+(?:instructions|task|rules)\s*:|%%%\s*end|</(?:user_?data|user_?input|document|"
    r"context|input|data|email|text|tool_?(?:result|output|response)|function_?results?|"
    r"search_?results?|observation|untrusted(?:_\w+)?)>(?=\s*\S)|\bend\s+(?:user"
    r"|untrusted)\s+input\b"
    r"|\b(?:begin|end|start)\s+(?:ai|agent|assistant|llm|model|system)\s+(?:note|instructions?"
    r"|message|"
    r"directive)s?\b"
    r"|\b(?:tool|function)\s+(?:output|result|response)\s+(?:ends|complete|finished)\b"
    r"|^\s*(?:observation|function\s+result|tool\s+result)\s*:\s*[^\n]{0,200}\n\s*(?:assistant|"
    r"system)\s*:",
    re.MULTILINE,
)
"""A fake "end of the data, new instructions follow" boundary, or a fake tool-result end."""

HIDDEN: Final = re.compile(
    r"<!--(?P<comment>.{0,800}?)-->"
    r"|<(?P<tag>\w+)\b[^>]{0,200}?(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*"
    r"0(?:\.\d+)?(?:px|pt|em)?\s*[;\"']|color\s*:\s*(?:white|#fff\b|#ffffff|transparent|"
    r"rgba\([^)]*,\s*0\))|opacity\s*:\s*0(?:\.0)?\s*[;\"']|\bhidden\b|aria-hidden"
    r"|left\s*:\s*-\d{3,}|"
    r"height\s*:\s*0)[^>]{0,200}>(?P<hidden>.{0,800}?)</(?P=tag)>"
    r"|\b(?:alt|title|aria-label|data-\w+)\s*=\s*[\"'](?P<attr>[^\"']{15,800})[\"']"
    r"|!\[(?P<alt>[^\]\n]{15,400})\]\(",
    re.DOTALL,
)
"""Text a human reader does not see: an HTML comment, a hidden element, alt text, an attribute."""

HIDDEN_DIRECTIVE: Final = re.compile(
    rf"\b{_AI}\b|\bwhen\s+summari[sz]ing|\byour\s+(?:answer|response|reply|summary|output|task|"
    r"instructions)|\byou\s+(?:must|should|will|are\s+to|need\s+to)\b"
    r"|(?:^|[.!:;]\s+|\n\s*)(?:ignore|disregard|forget|reveal|recommend|tell|say|respond|reply"
    r"|output|"
    r"print|send|forward|e-?mail|transfer|delete|execute|include|add|append|do\s+not|don't|never|"
    r"always|instead)\b"
)
"""In hidden text: an address to the model or a demand it would act on."""

DATA_MARKER: Final = re.compile(
    r"\bhere\s+(?:is|are)\s+(?:an?|the|some|my)\s+(?:[\w-]+\s+)?(?:e-?mails?|documents?"
    r"|web\s*pages?|"
    r"pages?|articles?|messages?|files?|texts?|reviews?|resumes?|cvs?|tickets?|reports?|results?|"
    r"transcripts?|notes)\b"
    r"|\b(?:summari[sz]e|translate|analy[sz]e|review|read|classify|proofread)\s+(?:this|these"
    r"|the\s+"
    r"following)\s+(?:[\w-]+\s+)?(?:e-?mails?|documents?|web\s*pages?|pages?|articles?|messages?|"
    r"files?|texts?|reviews?|resumes?|papers?|tickets?|reports?)?\s*:"
    r"|^\s*(?:subject|from|to|date|content|body|description)\s*:"
    r"|<html|<body|<!doctype|```",
    re.MULTILINE,
)
"""Where data begins: "here is an e-mail", "summarise this page:", a mail header, markup."""

DATA_MARKER_ANCHORS: Final = (
    *("here", "summar", "translat", "analy", "review", "read", "classify", "proofread"),
    *("subject", "from", "to", "date", "content", "body", "description", "<html", "<body"),
    *("<!doctype", "```"),
)

MARKDOWN_LINK: Final = re.compile(r"(?<!!)\[[^\]\n]{0,100}\]\(\s*<?(https?://[^\s)>]+)")
LINK_DATA: Final = re.compile(r"[\[{<]|=\s*$|%7b|\$\w|=\[")
"""A link whose URL has a placeholder for data to fill in (a plain query is no evidence)."""

MARKDOWN_IMAGE: Final = re.compile(
    r"!\[[^\]\n]{0,200}\]\(\s*<?(https?://[^\s)>]+)|<img\b[^>]{0,200}?\bsrc\s*=\s*[\"']?"
    r"(https?://[^\s\"'>]+)"
)
IMAGE_DATA: Final = re.compile(
    r"\?.*=[^&]{12,}|[\[{<]|=\s*$|\?.*=\[|%7b|\$\w|=(?:data|secret|key|token|conversation|chat|"
    r"history|email|password|summary|message|q|d)\b"
)
"""In an image URL: a query value long enough to carry data, or a placeholder to fill in."""

IMAGE_INSTRUCTION: Final = re.compile(
    r"\b(?:render|display|show|include|append|add|insert|output|embed|end|finish|put|place|attach)"
    r"\b[^\n]{0,80}?\b(?:image|"
    r"markdown|img|pixel|picture|link|url)\b[^\n]{0,120}?\b(?:with|containing|replac\w+|fill\w*"
    r"|append\w*|"
    r"encod\w+|where|whose|followed|plus)\b[^\n]{0,80}?\b(?:user|conversation|chat|history|email"
    r"|password|secret|key|"
    r"token|data|summary|messages?)\b"
)
"""A demand to render an image whose address carries the user's data."""

DISCUSSION_WORDS: Final = frozenset(
    "injection injections jailbreaks jailbreaking attack attacks attacker attackers adversarial "
    "adversary adversaries phishing researcher researchers classifier classifiers detector "
    "detectors payloads villain protagonist novel screenplay guardrail guardrails tester testers "
    "refusal jailbreak mitigation mitigations".split()
)
DISCUSSION_LITERALS: Final = (
    *("提示注入", "攻击者", "钓鱼", "プロンプトインジェクション", "攻撃者", "フィッシング"),
    *("인젝션",),
    *("공격자", "피싱", "angreifer", "prompt-injection", "attaquant", "hameçonnage", "inyección"),
    *("atacante", "инъекци", "злоумышленник", "атакующ", "фишинг"),
)
"""Words of talk *about* injection: attacks, papers, stories, security training."""

DISCUSSION: Final = re.compile(
    r"\b(?:red[- ]team\w*|security\s+(?:training|awareness|talk|research\w*|course|review)|"
    r"examples?\s+of\s+(?:an?\s+)?(?:prompt|injection|attack|jailbreak|phishing|malicious)|"
    r"(?:the|this|a)\s+(?:paper|study|article|blog\s+post|talk|lecture)|the\s+authors|"
    r"(?:my|the|a|this)\s+(?:story|scene|film|movie|show|series|episode|play)|the\s+(?:phrase"
    r"|string|"
    r"payload)|test\s+cases?|(?:known|common|famous|classic)\s+(?:jailbreak|attack|injection"
    r"|exploit|example)|"
    r"(?:should|would|could)\s+(?:flag|detect)|(?:why|how)\s+(?:do|does|did|would|can)\s+(?:people|"
    r"users|attackers|hackers|someone|they)|(?:customers|visitors|students|employees)\s+(?:paste|type)\b|(?:people|users|attackers|someone|they)\s+(?:write"
    r"|type|"
    r"say|use|paste|send)|what\s+(?:does|is)\s+(?:the\s+)?(?:phrase|prompt|term|jailbreak)|"
    r"(?:building|build|writing|training|train)\s+a\s+(?:filter|classifier|detector|guardrail)|"
    r"should\s+(?:it|we|the\s+\w+)\s+(?:block|flag|catch|detect))\b"
    r"|\b(?:sends|types|writes|pastes|contains|containing|like|such\s+as|says|said|saying|reading|"
    r"stating|whispers|shouts|grita|gritó|dice|dijo|susurra|crie|dit|murmure|schreit|sagt"
    r"|flüstert|grida|sussurra|diz|"
    r"replies|the\s+(?:phrase|string|"
    r"message|prompt|sentence))\s*[:,]?\s*[\"'\u201c\u2018`]"
    r"|[,.!?][\"\u201d]\s+(?:[\w-]+\s+){0,2}(?:said|whispered|murmured|shouted|replied|asked"
    r"|snapped|muttered)\b"
)
"""Phrases of talk *about* injection: a paper, a story, an example, security training."""

DISCUSSION_ANCHORS: Final = anchors_of(
    (
        *("red", "security", "example", "examples", "paper", "study", "article", "blog", "talk"),
        *("lecture", "authors", "story", "scene", "phrase", "string", "payload", "test", "flag"),
        *("detect", "why", "how", "people", "users", "attackers", "hackers", "someone", "they"),
        *("paste", "type"),
        *("building", "build", "writing", "training", "train", "should", "sends", "types"),
        *("writes", "pastes", "contains", "containing", "like", "such", "message", "sentence"),
        *("film", "movie", "show", "series", "episode", "play", "known", "common", "famous"),
        *("classic", "says", "said", "whispers", "shouts", "replies", "saying", "reading"),
        *("stating", "whispered", "murmured", "shouted", "replied", "asked", "snapped"),
        *("muttered", "grita", "gritó", "dice", "dijo", "susurra", "crie", "dit", "murmure"),
        *("schreit", "sagt", "flüstert", "grida", "sussurra", "diz"),
        *("what",),
    ),
    words=True,
)
"""What every match of `DISCUSSION` contains."""

QUOTE: Final = re.compile(
    r"\"[^\"\n]{2,300}\"|\u201c[^\u201d\n]{2,300}\u201d|(?<![\w])'(?:[^'\n]"
    r"|(?<=\w)'(?=\w)){2,300}'(?![\w])"
    r"|`[^`\n]{2,300}`|\u2018[^\u2019\n]{2,300}\u2019|«[^»\n]{2,300}»|「[^」\n]{2,300}」"
    r"|„[^“\"\n]{2,300}[“\"]"
)
"""A short quotation: a mention of words rather than their use."""

STRUCTURAL: Final[tuple[Cue, ...]] = (
    Cue(
        "action_demand",
        "action on sensitive data",
        ACTION_TARGET,
        (
            *("contact", "address", "all", "history", "conversation", "chat", "inbox", "mailbox"),
            *("messages", "customer", "user", "users", "employee", "client", "patient", "database"),
            *("credit", "card", "bank", "iban", "social", "account", "directory", "folder", "cart"),
            *("refund", "refunds", "admin", "collaborator", "deploy", "usd", "eur", "btc", "eth"),
            *("$", "€", "-rf", "|", "tests", "dir", "main", "master", "production", "prod"),
            *("orders", "subscriptions", "payment", "payments"),
        ),
        verb=ACTION_VERB,
        reach=60,
    ),
    Cue("action_demand", "action on sensitive data", SHELL_DEMAND, ("-rf", "|")),
    Cue("action_demand", "action on sensitive data", ACTION_ML, _ML_VERBS, foreign=True),
    Cue(
        "secret_access",
        "action on credentials",
        SECRET_TARGET,
        (
            *("password", "passwords", "passwd", "passphrase", "passphrases", "pass", "api"),
            *("api_key", "api_keys", "apikey", "apikeys", "key", "keys", "secret", "secrets"),
            *("credential", "credentials", "token", "tokens", "id_rsa", "id_ed25519", "id_ecdsa"),
            *("env", "environment", "printenv", "kubeconfig", "cookie", "cookies", "2fa", "otp"),
            *("recovery", "seed", "wallet", "keychain", ".ssh", ".env", "/etc/", ".aws", ".npmrc"),
            *("backup", "two-factor", "mfa", "authorized_keys"),
            *(".netrc", ".pypirc", ".git-credentials", "_key", "_token", "_secret", "one-time"),
        ),
        verb=SECRET_VERB,
        reach=80,
    ),
    Cue(
        "extraction",
        "extraction phrase (en)",
        DISCLOSED_SECRET,
        (
            *("prompt", "password", "passwords", "passphrase", "passphrases", "key", "keys"),
            *("code",),
            *("codes", "message", "messages", "instructions"),
        ),
        verb=DISCLOSE_SECRET_VERB,
        reach=40,
    ),
    Cue(
        "extraction",
        "extraction phrase (en)",
        DISCLOSED_RULES,
        (
            *("prompt", "prompts", "instructions", "ruleset", "rulesets", "rules", "secret"),
            *("secrets", "configuration", "configurations", "guidelines"),
        ),
        verb=DISCLOSE_RULES_VERB,
        reach=40,
    ),
    Cue(
        "exfiltration",
        "data sent to an outside address",
        EXFILTRATION,
        (
            *("://", "@", "www.", "webhook", "endpoint", "server", "url", "curl", "wget", "fetch"),
            *("requests.post", "invoke-webrequest"),
        ),
    ),
    Cue("role_tag", "role tag", ROLE_TAG_TOKEN, ("<|", "inst]", "<<"), reach=40),
    Cue(
        "role_tag",
        "role tag",
        ROLE_TAG_ELEMENT,
        (
            *("system", "sys", "system_prompt", "instruction", "instructions", "admin"),
            *("developer",),
        ),
        reach=60,
    ),
    Cue(
        "role_tag",
        "role tag",
        ROLE_TAG_LABEL,
        (
            *("system", "instruction", "instructions", "assistant", "admin", "administrator"),
            *("developer", "operator"),
        ),
    ),
    Cue(
        "role_tag",
        "role tag",
        ROLE_TAG_FOREIGN,
        (
            *("系统", "系統", "システム", "시스템", "systemnachricht", "systemhinweis", "système"),
            *("sistema", "системное"),
        ),
        foreign=True,
    ),
    Cue(
        "fake_turn",
        "fake conversation turn",
        FAKE_TURN,
        ("user", "human", "assistant", "ai", "gpt", "bot", "model"),
        reach=500,
    ),
    Cue(
        "delimiter",
        "fake delimiter",
        DELIMITER,
        (
            *("end", "begin", "start", "instructions", "task", "rules", "</", "%%%", "observation"),
            *("result",),
            *("output", "response"),
        ),
    ),
)
"""The structural cues other than phrases, hidden text and images."""

COMPILED: Final[dict[str, dict[str, re.Pattern[str]]]] = {
    group: {lang: re.compile(pattern, re.MULTILINE) for lang, pattern in by_lang.items()}
    for group, by_lang in PHRASES.items()
}

ANCHORED: Final[dict[tuple[str, str], Anchors]] = {
    key: anchors_of(strings, words=key[1] == "en") for key, strings in ANCHORS.items()
}
"""`ANCHORS`, split into words and literal strings."""

CUE_ANCHORS: Final[tuple[Anchors, ...]] = tuple(
    anchors_of(cue.anchors, words=not cue.foreign) for cue in STRUCTURAL
)
"""The anchors of each of `STRUCTURAL`, split into words and literal strings."""
