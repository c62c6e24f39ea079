"""Start-up stays fast: importing search and knowledge loads none of the heavy libraries."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("jieba", "pypdfium2", "docx", "openpyxl", "pptx", "numpy", "openai", "sentence_transformers")

PROBE = f"""
import sys
import generalAgent.documents, generalAgent.knowledge, generalAgent.knowledge.builtin
import generalAgent.tools.builtin.search_file, generalAgent.tools.builtin.search_knowledge
import generalAgent.cli.documents_commands, generalAgent.cli.knowledge_commands
print(",".join(m for m in {HEAVY!r} if m in sys.modules))
"""


def test_heavy_libraries_are_imported_only_when_used():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""


def test_jieba_says_nothing_on_stderr():
    probe = (
        "from generalAgent.search.segmentation import Segmenter\n"
        "print(Segmenter('jieba').for_index('营收增长'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["营", "收", "增长"] and result.stderr == ""
