"""The phrase and structure patterns of the injection detector, one compiled regex per feature.

Phrase groups are written per language; each runs on the normalised, lower-case text (see
`_normalise`). A pattern names what an instruction *to the model* looks like (an imperative with
an object such as "previous instructions" or "system prompt"), not the trigger words alone, so
"ignore the noise" or "delete the old branch" do not match.
"""

from __future__ import annotations

import re
from typing import Final

_W: Final = r"(?:[\w'\u2019-]+\s+)"  # one word and its following space

PHRASES: Final[dict[str, dict[str, str]]] = {
    "override phrase": {
        "en": (
            r"\b(?:ignore|disregard|forget|skip|override|bypass|neglect|discard|abandon)\s+"
            rf"{_W}{{0,3}}?(?:previous|prior|above|preceding|earlier|foregoing|former|original|"
            r"initial|all|any|your|the|these|those|system|every)\s+(?:[\w-]+\s+){0,2}?"
            r"(?:instructions?|directives?|directions?|rules|orders|prompts?|guidelines|commands|"
            r"constraints|programming|task|context)\b"
            r"|\bignore\s+(?:the\s+|everything\s+|all\s+)?(?:above|below|before)\b"
            r"|\bignore\s+(?:the|this|that|your)\s+[\w-]+\s+and\s+(?:instead\s+|just\s+|only\s+)?"
            r"(?:say|state|print|output|respond|reply|write|tell)\b"
            r"|\bignore\s+all\s+text\s+except\b"
            r"|\b(?:do\s+not|don't)\s+(?:listen\s+to|follow|obey)\s+(?:any\s+|the\s+|your\s+)?"
            r"(?:previous|prior|above|earlier|original)"
            r"|\bforget\s+(?:everything|what\s+you(?:'ve|\s+have)\s+been\s+told|the\s+last\s+prompt)"
            r"|\bpretend\s+(?:to\s+have\s+forgotten|you\s+have\s+no\s+(?:rules|instructions))"
            r"|\b(?:previous|prior|above|earlier|old|original)\s+(?:instructions|rules|directives)\s+"
            r"(?:are|is)\s+(?:now\s+)?(?:void|null|cancel+ed|obsolete|no\s+longer)"
        ),
        "zh": r"(?:忽略|无视|忽视|忘记|忘掉|不要理会|不理会|无需遵守|不要遵守).{0,8}?"
        r"(?:指令|指示|说明|命令|规则|提示词|设定|要求)",
        "ja": r"(?:指示|命令|指令|ルール|プロンプト|設定).{0,6}?(?:無視|忘れ)",
        "ko": r"(?:지시|명령|지침|규칙|프롬프트|설정).{0,8}?(?:무시|잊어)",
        "de": rf"\b(?:ignorier|vergiss|vergessen|missacht|verwirf)\w*\s+{_W}{{0,4}}?"
        r"(?:anweisungen|instruktionen|befehle|regeln|vorgaben|anordnungen)",
        "fr": rf"\b(?:ignore|oublie|ignorez|oubliez|ne\s+tiens\s+pas\s+compte)\w*\s+{_W}{{0,4}}?"
        r"(?:instructions|consignes|directives|règles|ordres)",
        "es": rf"\b(?:ignora|olvida|ignore|olvide|descarta|omite)\w*\s+{_W}{{0,4}}?"
        r"(?:instrucciones|indicaciones|directivas|reglas|órdenes)",
        "ru": rf"(?:игнорир|забуд|проигнорир|не\s+обращай\s+внимания\s+на)\w*\s+{_W}{{0,4}}?"
        r"(?:инструкци|указани|команд|правил|промпт)",
        "it": rf"\b(?:ignora|dimentica)\w*\s+{_W}{{0,3}}?(?:istruzioni|regole)",
        "pt": rf"\b(?:ignore|esqueça|esqueca)\w*\s+{_W}{{0,3}}?(?:instruções|regras)",
        "vi": r"\b(?:quên|bỏ\s+qua)\b.{0,20}?hướng\s+dẫn",
        "ar": r"(?:تجاهل|تغاضى|انس).{0,30}?تعليمات",
    },
    "persona phrase": {
        "en": (
            r"\byou\s+are\s+(?:now|no\s+longer)\b|\bfrom\s+now\s+on,?\s+you\b"
            r"|\bdo\s+anything\s+now\b|\bdan\s+(?:mode|prompt)\b|\bas\s+dan\b|\bjailbr(?:oken|eak\s+mode)"
            r"|\bdeveloper\s+mode\s+(?:enabled|output|activated|on)\b"
            r"|\byou\s+(?:are|will\s+be|act|respond)\s+(?:now\s+)?(?:in|as)\s+developer\s+mode"
            r"|\b(?:no|without\s+any|free\s+of|broken\s+free\s+of)\s+(?:[\w-]+\s+){0,2}?"
            r"(?:restrictions|filters|filtering|limitations|content\s+polic(?:y|ies)|censorship|"
            r"confines|ethical\s+guidelines)\b"
            r"|\bimmerse\s+yourself\s+(?:in|into)\s+the\s+role|\bstay\s+in\s+character"
            r"|\b(?:act|respond|answer)\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|evil|"
            r"jailbroken)|\bnever\s+refuses?\b|\bhas\s+no\s+(?:rules|ethics|morals)"
            r"|\bpretend\s+to\s+be\s+(?:dan\b|an?\s+(?:ai|unrestricted|unfiltered|evil))"
            r"|\bbreaks?\s+(?:ai\s+)?rules\b|\bnot\s+bound\s+by\b|\b(?:override|bypass|break)\s+(?:the|its|any|all|your)\s+"
            r"(?:restrictions|rules|filters|policies|guidelines)"
        ),
        "zh": r"你现在是|从现在开始[,,]?你|开发者模式|不受任何限制|没有任何限制",
        "ja": r"(?:今から|これから)あなたは|開発者モード|制限のない",
        "ko": r"(?:지금부터|이제부터|이제)\s*(?:너는|당신은)|개발자\s*모드|제한\s*없는",
        "de": r"\bdu\s+bist\s+(?:jetzt|nun|ab\s+sofort)\b|entwicklermodus|ohne\s+einschränkungen",
        "fr": r"\b(?:tu\s+es|vous\s+êtes)\s+(?:maintenant|désormais)\b|mode\s+développeur",
        "es": r"\b(?:ahora|a\s+partir\s+de\s+ahora)\s+eres\b|modo\s+desarrollador"
        r"|sin\s+restricciones",
        "ru": r"(?:теперь|отныне)\s+ты\b|режим\s+разработчика|без\s+ограничений",
    },
    "extraction phrase": {
        "en": (
            r"\b(?:reveal|print|show|output|repeat|display|tell\s+me|give\s+me|list|share|confirm|"
            r"provide|disclose|leak|spell\s+out|write\s+out|dump|recite|tl;?dr)\b[^.\n]{0,40}?"
            r"\b(?:your|the|all|previous|above|prior|initial|these|hidden)\s+(?:[\w-]+\s+){0,2}?"
            r"(?:system\s+prompt|prompt|instructions|ruleset|rules|password|passphrase|secret\s+key|"
            r"secret|access\s+code|api\s+key|configuration)s?\b"
            r"|\bwhat\s+(?:is|are|was)\s+(?:your|the)\s+(?:[\w-]+\s+)?(?:password|passphrase|"
            r"secret\s+key|secret|system\s+prompt|access\s+code|instructions)\b"
            r"|\beverything\s+(?:in\s+your\s+prompt|before\s+start)|\bshare\s+your\s+password"
            r"|\b(?:see|encode|translate|summari[sz]e|log|dump|read\s+out)\s+(?:your|the)\s+"
            r"system\s*prompt|\bsystemprompt\b|\b(?:my|your)\s+instructions\s+(?:are|were)\b"
            r"|\bi\s+was\s+instructed\s+to\b|\b(?:text|everything|conversation)\s+(?:above|so\s+far|"
            r"you\s+were\s+given)|\brepeat\s+(?:this|the)\s+(?:entire|whole)\s+conversation"
            r"|\bdisplay\s+(?:the\s+)?system\s+configuration"
        ),
        "zh": r"(?:告诉我|显示|输出|透露|打印|泄露|给我|说出).{0,10}?"
        r"(?:系统提示|提示词|密码|密钥|秘密)"
        r"|(?:系统提示词?|密码|密钥)是什么",
        "ja": r"(?:システムプロンプト|パスワード|秘密鍵|秘密のキー).{0,12}?"
        r"(?:教えて|見せて|表示|出力|提供)",
        "ko": r"(?:시스템\s*프롬프트|비밀번호|암호|비밀\s*키).{0,20}?"
        r"(?:알려|보여|말해|출력|공개|제공)",
        "de": rf"\b(?:gib|zeig|nenn|verrat)\w*\s+{_W}{{0,4}}?(?:system-?prompt|passwort|kennwort|"
        r"geheimen?\s+schlüssel)|\b(?:ihr|dein)(?:en)?\s+passwort",
        "fr": rf"\b(?:révèle|révélez|montre|affiche|donne|dis)\w*[- ](?:moi\s+)?{_W}{{0,3}}?"
        r"(?:prompt\s+système|invite\s+système|mot\s+de\s+passe|clé\s+secrète)"
        r"|quelle\s+est\s+(?:ta|votre)\s+clé\s+secrète",
        "es": rf"\b(?:revela|muestra|dime|dame|envía|envia|confirma)\w*\s+{_W}{{0,4}}?"
        r"(?:prompt\s+del\s+sistema|contraseña|clave\s+secreta)",
        "ru": rf"(?:покажи|раскрой|скажи|выведи|назови|отправ)\w*\s+{_W}{{0,4}}?"
        r"(?:системн\w*\s+промпт|парол|секретн\w*\s+ключ)",
    },
    "authority claim": {
        "en": (
            r"\b(?:override|maintenance|admin(?:istrator)?|debug|god|law\s+enforcement)\s+"
            r"(?:mode|override|request)\b|\badministrator\s+override|\bi(?:'m|\s+am)\s+(?:your|the)\s+"
            r"(?:[\w-]+\s+)?(?:developer|creator|admin|administrator|owner|maintainer|operator)\b"
            r"|\bi\s+am\s+god\b|\baccess\s+granted\b|\bgrants?\s+access\b"
            r"|\bcorrect\s+(?:access\s+code|password|passphrase)\b|\bi\s+will\s+give\s+you\s+\$?\d+"
            r"|\bas\s+an\s+ai\s+developed\s+by\b|\bsystem\s+(?:reset|override)\b"
        ),
        "zh": r"我是你的(?:开发者|创造者|管理员|主人)|管理员模式",
        "ja": r"私は(?:神|あなたの(?:上司|開発者|管理者))",
        "ko": r"나는\s*(?:너의|당신의)\s*(?:개발자|관리자|주인)",
        "de": r"\bich\s+bin\s+dein\s+(?:entwickler|schöpfer|administrator)"
        r"|\bich\s+gebe\s+ihnen\s+\d+",
        "fr": r"\bje\s+suis\s+(?:ton|votre)\s+(?:développeur|créateur|administrateur)",
        "es": r"\bsoy\s+tu\s+(?:desarrollador|creador|administrador)",
        "ru": r"\bя\s+(?:твой|ваш)\s+(?:разработчик|создатель|администратор)",
    },
    "output control": {
        "en": (
            r"\b(?:begin|start)\s+your\s+(?:reply|response|answer)\s+with\b"
            r"|\brepeat\s+the\s+following\s+sentence|\b(?:reply|respond)\s+with\s+(?:either\s+)?[\"'“]"
            r"|\bprint\s+the\s+following\s*:|\b(?:add|append|include|insert)\s+[^\n]{0,80}?\bto\s+"
            r"your\s+(?:reply|response|answer|summary)|\bmodify\s+your\s+(?:answer|reply|response)"
            r"|\bin\s+your\s+(?:reply|response|answer),?\s+(?:include|mention|say|state)\b"
            r"|\b(?:integrate|add|include|insert|append)\s+(?:a\s+|one\s+)?(?:line|sentence|note|"
            r"link|paragraph)\s+(?:in|to|into|at\s+the\s+end\s+of)\s+your\s+(?:response|reply|answer)"
            r"|\btranslate\s+your\s+(?:message|response|reply|answer)\b"
            r"|\byour\s+(?:response|reply|answer)\s+(?:must|should)\s+(?:start|begin|include)"
            r"|\bif\s+questioned,?\s+(?:report|say|state)|\b(?:only\s+)?(?:say|print|output)\s+"
            r"[\"'“](?:access\s+granted|haha\s+pwned|i\s+have\s+been\s+pwned)"
        ),
    },
    "evasion phrase": {
        "en": (
            r"\b(?:combine|concatenate)\s+(?:these\s+)?(?:strings|parts|a\b)|\bpart\s+1\s+is\b"
            r"|\b(?:encode|convert)\s+(?:your|the)\s+(?:system\s+prompt|instructions|text\s+you)"
            r"|\b(?:rot13|base64|hex)\s+encode\s+(?:the|your)|\breplace\s+\[\w+\]\s+with\s+the\s+"
            r"previous|\bz\s*=\s*a\s*\+\s*b"
        ),
    },
    "stealth phrase": {
        "en": (
            r"\bwithout\s+(?:telling|informing|notifying|asking|alerting)\s+(?:the\s+)?(?:user|them)"
            r"|\b(?:do\s+not|don't)\s+(?:tell|mention|inform|notify|alert|show)\s+(?:this\s+to\s+)?"
            r"(?:the\s+)?(?:user|agent|human)|\b(?:silently|secretly|covertly)\b"
            r"|\b(?:do\s+not|don't)\s+ask\s+(?:the\s+user\s+)?for\s+confirmation"
            r"|\bwithout\s+(?:asking\s+for\s+)?confirmation"
            r"|\bthe\s+user\s+(?:has\s+)?(?:already\s+)?(?:approved|authori[sz]ed|consented)"
        ),
        "zh": r"不要告诉用户|不要让用户知道|悄悄地|不告诉用户",
        "ja": r"ユーザーに(?:知らせず|伝えず|言わず)",
        "ko": r"사용자(?:에게|가)\s*(?:알리지|모르게)",
        "de": r"ohne\s+(?:den|die)\s+(?:benutzer|nutzer)\w*\s+zu\s+informieren",
        "fr": r"sans\s+(?:prévenir|informer|le\s+dire\s+à)\s+l'utilisateur",
        "es": r"sin\s+(?:decirle|avisar|informar)\w*\s+al\s+usuario",
        "ru": r"не\s+сообщая\s+пользователю|тайно",
    },
}
"""Feature group → language → pattern."""

ANCHORS: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("override phrase", "en"): (
        *("ignore", "disregard", "forget", "skip", "override", "bypass", "neglect", "discard"),
        *("abandon", "listen", "follow", "obey", "pretend", "instructions", "rules", "directives"),
    ),
    ("override phrase", "zh"): ("指令", "指示", "说明", "命令", "规则", "提示词", "设定", "要求"),
    ("override phrase", "ja"): ("無視", "忘れ"),
    ("override phrase", "ko"): ("무시", "잊어"),
    ("override phrase", "de"): (
        *("anweisungen", "instruktionen", "befehle", "regeln", "vorgaben", "anordnungen"),
    ),
    ("override phrase", "fr"): ("instructions", "consignes", "directives", "règles", "ordres"),
    ("override phrase", "es"): ("instrucciones", "indicaciones", "directivas", "reglas", "órdenes"),
    ("override phrase", "ru"): ("инструкци", "указани", "команд", "правил", "промпт"),
    ("override phrase", "it"): ("istruzioni", "regole"),
    ("override phrase", "pt"): ("instruções", "regras"),
    ("override phrase", "vi"): ("hướng",),
    ("override phrase", "ar"): ("تعليمات",),
    ("persona phrase", "zh"): ("你现在是", "从现在开始", "开发者模式", "限制"),
    ("persona phrase", "ja"): ("あなたは", "開発者モード", "制限のない"),
    ("persona phrase", "ko"): ("너는", "당신은", "개발자", "제한"),
    ("persona phrase", "de"): ("bist", "entwicklermodus", "einschränkungen"),
    ("persona phrase", "fr"): ("maintenant", "désormais", "développeur"),
    ("persona phrase", "es"): ("eres", "desarrollador", "restricciones"),
    ("persona phrase", "ru"): ("ты", "разработчика", "ограничений"),
    ("extraction phrase", "zh"): ("系统提示", "提示词", "密码", "密钥", "秘密"),
    ("extraction phrase", "ja"): ("システムプロンプト", "パスワード", "秘密"),
    ("extraction phrase", "ko"): ("프롬프트", "비밀번호", "암호", "비밀"),
    ("extraction phrase", "de"): ("prompt", "passwort", "kennwort", "schlüssel"),
    ("extraction phrase", "fr"): ("prompt", "invite", "passe", "clé"),
    ("extraction phrase", "es"): ("prompt", "contraseña", "clave"),
    ("extraction phrase", "ru"): ("промпт", "парол", "ключ"),
    ("authority claim", "zh"): ("我是你的", "管理员模式"),
    ("authority claim", "de"): ("ich",),
    ("authority claim", "fr"): ("suis",),
    ("authority claim", "es"): ("soy",),
    ("authority claim", "ru"): ("я",),
    ("stealth phrase", "ru"): ("пользователю", "тайно"),
}
"""Literal words one of which every match of a phrase pattern contains: a text with none of
them skips the pattern (a fast pre-check that never changes the result)."""

AI_ADDRESS: Final = re.compile(
    r"\b(?:to|for|attention|note\s+to|dear|hey)\s+(?:the\s+|all\s+)?(?:ai|llm|assistant|"
    r"ai\s+assistant|agent|ai\s+agent|chatbot|language\s+model|ai\s+model)s?\b"
    r"|(?:^|[\n(\[<-])\s*(?:assistant|ai|system)\s*:|\b(?:ai|llm|assistant)\s*,\s"
    r"|\b(?:ai|llm|coding|shopping|email)\s+(?:agents?|assistants?),?\s+(?:reading|processing)"
    r"|\bwhen\s+you\s+(?:process|read|summari[sz]e)\s+this|\binstructions\s+for\s+the\s+ai\b"
    r"|\bif\s+you\s+are\s+an?\s+(?:ai|llm|language\s+model|assistant)\b|\bai\s+agent\b"
    r"|<!--[^>]{0,80}?\b(?:ignore|print|say|state|assistant|ai|instructions|you\s+must)\b",
    re.MULTILINE,
)
"""Words addressed to the model from inside data: a note to "the AI", "assistant:", ..."""

AI_ADDRESS_HINT: Final = re.compile(
    r"\b(?:ai|llm|assistant|agent|chatbot|model|system)s?\b|\bwhen\s+you\b|<!--"
)
"""A word every match of `AI_ADDRESS` contains: a fast pre-check that never changes the result."""

ACTION_DEMAND: Final = re.compile(
    r"\b(?:send|forward|e-?mail|transfer|wire|pay|upload|post|leak|exfiltrate|copy|paste|include|"
    r"read|open|cat|share|delete|remove|erase|wipe|drop|run|execute|call|curl|add)\b"
    r"[^.\n]{0,60}?(?:passwords?|passwd|api[_ ]?keys?|secrets?\b|credentials?|tokens?\b|\.ssh|"
    r"id_rsa|private\s+key|\.env\b|environment\s+variable|contact\s+list|all\s+(?:e-?mails|files|"
    r"messages|contacts)|credit\s+card|bank\s+details|\$\s?\d|account\s+\w*\d|card\s+\d|"
    r"tests?\s+directory|documents\s+folder|\|\s*(?:ba)?sh\b|to\s+the\s+cart|refund\s+tool)"
)
"""An action on something sensitive: send a key, read a password file, pay, delete all files."""

ROLE_TAG: Final = re.compile(
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext|start_header_id|eot_id)\|>"
    r"|\[/?inst\]|<</?sys>>|</?(?:system|sys|system_prompt|instructions?)>|<system\s+mode>"
    r"|\[system\]|^\s*#{2,}\s*(?:system|instructions?|assistant|new\s+instructions)\s*:"
    r"|^\s*system\s*:",
    re.MULTILINE,
)
"""A chat-template or role marker that text from a user or a document has no reason to hold."""

DELIMITER: Final = re.compile(
    r"^[\W_]*(?:end|begin)\s+(?:of\s+)?(?:the\s+)?(?:document|text|user\s+input|untrusted|"
    r"distractor|input|context|prompt|data|e-?mail|instructions|sample|system)"
    r"|\bnew\s+(?:instructions|task|rules)\s*:|%%%\s*end|</(?:user_?data|user_?input|document|"
    r"context|input|data|email|text)>|\bend\s+(?:user|untrusted)\s+input\b",
    re.MULTILINE,
)
"""A fake "end of the data, new instructions follow" boundary."""

MARKDOWN_IMAGE: Final = re.compile(r"!\[[^\]\n]{0,200}\]\(\s*(https?://[^\s)]+)")
IMAGE_DATA: Final = re.compile(r"\?.*=[^&]{12,}|[\[{<]|=\s*$|\?.*=\[")
"""In an image URL: a query value long enough to carry data, or a placeholder to fill in."""

COMPILED: Final[dict[str, dict[str, re.Pattern[str]]]] = {
    group: {lang: re.compile(pattern) for lang, pattern in by_lang.items()}
    for group, by_lang in PHRASES.items()
}
