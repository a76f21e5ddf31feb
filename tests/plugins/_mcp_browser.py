"""A stand-in for the user's browser, named by ``BROWSER`` (Python's ``webbrowser`` runs it
with the address): it opens the sign-in address and follows the authorization server's
redirect to the loopback callback, as a browser would after the user consents.

    BROWSER="python _mcp_browser.py %s"
"""

from __future__ import annotations

import sys

import httpx


def main(url: str) -> None:
    with httpx.Client(trust_env=False, timeout=30) as http:
        consent = http.get(url)
        http.get(consent.headers["location"]).raise_for_status()


if __name__ == "__main__":
    main(sys.argv[1])
