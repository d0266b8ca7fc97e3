"""``generate_html``: the page ``process`` writes next to its JSONL (``<stem>.html``)."""
import html
import json
from pathlib import Path
from typing import Optional


def generate_html(jsonl_path: Optional[str]) -> None:
    if not jsonl_path or not Path(jsonl_path).exists():
        return
    rows = []
    for number, line in enumerate(Path(jsonl_path).read_text().splitlines(), start=1):
        if line.strip():
            group = json.loads(line)
            rows.append(f"<tr><td>{number}</td><td>{html.escape(str(group.get('scores')))}</td></tr>")
    page = "<html><body><table><tr><th>group</th><th>scores</th></tr>" + "".join(rows) + "</table></body></html>"
    Path(jsonl_path).with_suffix(".html").write_text(page)
