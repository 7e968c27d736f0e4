"""Print the wire of a kit's run from its inspector page, to check a verdict against it.

    python tests/real/wire.py tests/real/out/NAME/page.html [TEXT ...]

One line per message (its number, direction, the message as compact JSON), only those that
contain every TEXT given (an id, a method, a session id). A client's pages are
`tests/real/out/NAME/conn-*.html`.
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

DATA = re.compile(r'<script type="application/json" id="session-data">(.*?)</script>', re.DOTALL)
ARROWS = {"client-to-agent": "c->a", "agent-to-client": "a->c"}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    page = Path(argv[0]).read_text(encoding="utf-8")
    found = DATA.search(page)
    if found is None:
        print(f"wire: {argv[0]}: no session data in the page", file=sys.stderr)
        return 1
    data = json.loads(html.unescape(found.group(1)) if "&quot;" in found.group(1)
                      else found.group(1))
    for row in data["rows"]:
        try:
            text = json.dumps(json.loads(row["json"]), separators=(",", ":"))
        except (ValueError, TypeError):
            text = str(row.get("json"))
        if all(needle in text for needle in argv[1:]):
            print(f"{row['n']:>5} {ARROWS.get(row['dir'], row['dir'])} {text}")
    for line in data.get("loose", []):
        print(f"loose {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
