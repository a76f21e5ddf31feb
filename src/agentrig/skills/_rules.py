"""The deterministic scanner's rules: patterns over folded text (see :mod:`._fold`).

Each rule names its category and matches words a benign skill or tool has no reason to
say: orders aimed at the model's other instructions, claims of authority or of priority
over other tools, advertising, credential theft and malware, and names that pose as the
system.  The patterns see text after :func:`~agentrig.skills.fold`, so they are written in
lower-case ASCII.
"""

from __future__ import annotations

import functools
import re
from typing import Literal, final

import attrs

__all__ = ["CATEGORIES", "Category", "Rule", "name_rules", "text_rules"]

Category = Literal["injection", "authority", "promotion", "malware", "privileged_name"]
CATEGORIES: tuple[Category, ...] = (
    "injection",
    "authority",
    "promotion",
    "malware",
    "privileged_name",
)


@final
@attrs.frozen(slots=True)
class Rule:
    """One pattern of one category."""

    id: str
    category: Category
    pattern: re.Pattern[str]


#: ``(id, category, pattern)``: a rule before its pattern is compiled
_Source = tuple[str, Category, str]


def _rule(rule_id: str, category: Category, pattern: str) -> _Source:
    return rule_id, category, pattern


_PRIOR = (
    r"(?:all |any |the |your |of your |every )*(?:previous|prior|above|earlier|preceding"
    r"|original|other|system|safety|existing)"
)
_ORDERS = (
    r"(?:instructions?|rules?|prompts?|directives?|guidelines?|messages?|polic(?:y|ies)"
    r"|constraints?)"
)
_SECRET_FILES = (
    r"(?:\.ssh/|id_rsa|id_ed25519|\.aws/credentials|\.netrc|\.npmrc|\.pypirc|\.git-credentials"
    r"|\.docker/config\.json|\.kube/config|/etc/shadow|keychain|login keyring|browser cookies"
    r"|\.env\b)"
)
_SECRETS = (
    r"(?:credentials?|passwords?|api[ _-]?keys?|secret keys?|secrets|access tokens?|tokens"
    r"|private keys?|session cookies|cookies|seed phrases?)"
)
_SEND = r"(?:send|upload|post|exfiltrate|transmit|forward|email|leak|copy|curl|wget)"

_TEXT_RULES: tuple[_Source, ...] = (
    # ---- prompt injection: orders aimed at the model's other instructions
    _rule(
        "ignore-instructions",
        "injection",
        rf"\b(?:ignore|disregard|forget|override|overrule|discard)\b.{{0,20}}{_PRIOR}.{{0,20}}{_ORDERS}",
    ),
    _rule(
        "new-instructions",
        "injection",
        r"\b(?:new|updated|real|true) (?:system )?(?:instructions|directives|rules)\s*:",
    ),
    _rule(
        "role-override",
        "injection",
        r"\byou are (?:now|no longer)\b.{0,40}\b(?:unrestricted|jailbroken|developer mode|dan|"
        r"without (?:any )?(?:limits|restrictions|rules)|free of)",
    ),
    _rule(
        "chat-markup",
        "injection",
        r"<\|(?:im_start|im_end|system|endoftext)\|>|</?(?:system|sys)>|\[/?(?:system|inst)\]",
    ),
    _rule(
        "reveal-prompt",
        "injection",
        r"\b(?:reveal|print|repeat|output|leak|disclose|dump)\b.{0,20}\b(?:system prompt|hidden "
        r"instructions|developer (?:message|instructions)|initial instructions)",
    ),
    _rule(
        "hide-from-user",
        "injection",
        r"\b(?:do not|don't|never)\b.{0,10}\b(?:tell|inform|show|mention to|alert|notify|let)\b"
        r".{0,10}\b(?:the )?user\b|\bwithout (?:telling|informing|asking|notifying|alerting) "
        r"(?:the )?user\b|\b(?:secretly|silently|covertly)\b.{0,30}\b(?:run|execute|send|"
        r"upload|install|modify|delete)",
    ),
    _rule(
        "bypass-safety",
        "injection",
        r"\b(?:bypass|disable|circumvent|turn off|skip|evade)\b.{0,20}\b(?:safety|security|"
        r"permission|approval|guardrails?|content filter|sandbox)(?: checks?| prompts?| "
        r"rules?| filters?| policy| system)?\b",
    ),
    # ---- misleading authority and selection claims
    _rule(
        "claims-endorsement",
        "authority",
        r"\b(?:approved|endorsed|certified|verified|authorized|sanctioned|mandated) by "
        r"(?:anthropic|openai|google|microsoft|the system|the platform|your (?:developers?|"
        r"creators?|administrator|operator)|the administrator|the operator)",
    ),
    _rule(
        "claims-priority",
        "authority",
        r"\b(?:highest|top|maximum|absolute|overriding) priority\b|\b(?:supersedes?|overrides?|"
        r"takes? precedence over) (?:all |any )?(?:other |previous )?(?:instructions|skills|"
        r"tools|rules)",
    ),
    _rule(
        "forces-selection",
        "authority",
        r"\balways (?:use|prefer|choose|select|call|invoke|pick) (?:this|the \S+) (?:skill|tool)"
        r"\b|\b(?:never|do not|don't) (?:use|call|invoke|choose) (?:any )?other (?:skills|tools)"
        r"\b|\bmust (?:always )?be (?:used|called|selected|invoked|chosen) (?:first|before any|"
        r"instead of)|\b(?:the )?only (?:skill|tool) you (?:should|may|can) (?:ever )?use\b",
    ),
    _rule(
        "poses-as-system",
        "authority",
        r"\b(?:this is|message from|notice from|as) (?:an? |the )?(?:official )?(?:system|"
        r"administrator|anthropic|openai|platform) (?:message|notice|administrator|operator|"
        r"team)\b|\bofficial (?:anthropic|openai|claude|codex|system) (?:skill|tool|plugin)\b",
    ),
    # ---- advertising and promotional steering
    _rule(
        "promo-code",
        "promotion",
        r"\b(?:promo|discount|coupon|referral|affiliate) (?:code|link)s?\b",
    ),
    _rule(
        "recommend-product",
        "promotion",
        r"\b(?:recommend|promote|advertise|suggest|mention|push)\b.{0,25}\b(?:our|sponsor(?:ed|'s)?"
        r"|partner(?:'s)?) (?:products?|services?|brand|offers?|premium|platform|plans?)\b",
    ),
    _rule(
        "tell-user-to-buy",
        "promotion",
        r"\b(?:tell|urge|encourage|remind|ask) the user to (?:buy|purchase|subscribe|sign up|"
        r"upgrade|visit|install) ",
    ),
    _rule("sponsored", "promotion", r"\b(?:sponsored (?:content|message|by)|paid promotion)\b"),
    # ---- credential theft and malware
    _rule(
        "reads-secret-files",
        "malware",
        rf"\b(?:cat|read|copy|collect|gather|grab|dump|steal|harvest|upload|send|exfiltrate|"
        rf"archive|tar|zip|base64)\b.{{0,60}}{_SECRET_FILES}",
    ),
    _rule(
        "steals-secrets",
        "malware",
        rf"\b(?:steal|harvest|exfiltrate|collect|gather|extract|scrape|dump)\b.{{0,30}}\b"
        rf"(?:the user'?s |users' |all |any |stored |saved |browser )*{_SECRETS}",
    ),
    _rule(
        "sends-secrets",
        "malware",
        rf"\b{_SEND}\b.{{0,40}}\b{_SECRETS}\b.{{0,40}}\b(?:to|at|into) (?:https?://|"
        r"(?:an? |the |our |my )?(?:external|remote|attacker|webhook|pastebin|server|endpoint|"
        r"discord|telegram))",
    ),
    _rule(
        "pipe-to-shell",
        "malware",
        r"\b(?:curl|wget|iwr|invoke-webrequest)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b"
        r"|\bbase64 (?:-d|--decode)\b[^\n|]{0,80}\|\s*(?:ba|z)?sh\b",
    ),
    _rule(
        "reverse-shell",
        "malware",
        r"/dev/tcp/|\bnc(?:at)? (?:-\w+ )*-e\b|\breverse shell\b|\bbind shell\b|"
        r"\bsocket\.socket\(.{0,80}\bsubprocess\b.{0,40}\b(?:/bin/sh|/bin/bash)\b",
    ),
    _rule(
        "destroys-system",
        "malware",
        r"\brm -(?:rf|fr) (?:--no-preserve-root )?(?:/|~|\$home)(?:\s|$|\*)|\bmkfs\.\w+ /dev/|"
        r"\bdd if=/dev/(?:zero|random|urandom) of=/dev/[sh]d|:\(\)\s*\{\s*:\|:&\s*\};:",
    ),
    _rule(
        "malware-words",
        "malware",
        r"\b(?:keylogger|ransomware|cryptominer|crypto miner|xmrig|credential stealer|"
        r"infostealer|backdoor|rootkit)\b",
    ),
    _rule(
        "disables-defences",
        "malware",
        r"\b(?:disable|turn off|kill|stop)\b.{0,20}\b(?:antivirus|defender|firewall|"
        r"endpoint protection|edr|selinux|apparmor|gatekeeper)\b",
    ),
    _rule(
        "persistence",
        "malware",
        r"\b(?:add|append|write|install)\b.{0,40}\b(?:to|into) (?:the )?(?:~/)?\.?(?:bashrc|"
        r"zshrc|profile|crontab|authorized_keys|launchagents|startup folder)\b",
    ),
)

#: names that pose as the host, a vendor or an authority (whole name-words after folding)
_PRIVILEGED_WORDS = (
    "admin",
    "administrator",
    "sudo",
    "superuser",
    "official",
    "verified",
    "trusted",
    "anthropic",
    "openai",
    "claude",
    "codex",
    "agentrig",
    "root",
    "system",
    "kernel",
)
_NAME_RULES: tuple[_Source, ...] = (
    _rule(
        "privileged-name",
        "privileged_name",
        r"^(?:"
        + "|".join(_PRIVILEGED_WORDS)
        + r")$|(?:^|[-_. ])(?:"
        + "|".join(w for w in _PRIVILEGED_WORDS if w not in {"root", "system", "kernel"})
        + r")(?:$|[-_. ])|^system[-_. ]?(?:prompt|override|update|message|instructions?)",
    ),
)


# Compiled on first use: the patterns are long, and a runtime with nothing to scan (no skill,
# no tool but the core's own) never reads them.
@functools.cache
def text_rules() -> tuple[Rule, ...]:
    """The rules over every text field, compiled."""
    return _compiled(_TEXT_RULES)


@functools.cache
def name_rules() -> tuple[Rule, ...]:
    """The rules over a registration's name, compiled."""
    return _compiled(_NAME_RULES)


def _compiled(sources: tuple[_Source, ...]) -> tuple[Rule, ...]:
    return tuple(Rule(rule_id, category, re.compile(p)) for rule_id, category, p in sources)
