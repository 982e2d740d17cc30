#!/usr/bin/python3
"""docs/scenarios.md holds exactly what `rnicsim schema` prints (scripts/update-docs fixes it)."""
import os
import sys

from common import check, finish, rnicsim

binary = sys.argv[1]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
text = open(os.path.join(root, "docs", "scenarios.md")).read()
a, b = "<!-- schema:begin -->\n", "<!-- schema:end -->"
check(text[text.index(a) + len(a):text.index(b)] == rnicsim(binary, "schema").stdout,
      "docs/scenarios.md is out of date: run scripts/update-docs")
finish("docs_current")
