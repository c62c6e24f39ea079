"""One pdfium call at a time in the whole process.

PDFium is not thread-safe: two threads may not call it at once, not even on different
documents, or the process crashes or is corrupted (pypdfium2's documentation,
"Incompatibility with Threading"). The agent reads PDFs in a tool call's thread, in the
background reading of a long scan (ocr_background.py) and at the chat's prompt (an
attachment's page count), so every pdfium call is made holding `PDFIUM`: opening and
closing a document, its pages, text pages and bitmaps included. Rendered pages are copied
out of pdfium's buffer before the bitmap is closed, so nothing pdfium owns is freed later
by the garbage collector in another thread. OCR itself (its engine runs in a process of
its own) runs outside the lock: a scan read in the background holds it only while a page
is rendered.
"""

from __future__ import annotations

import threading

PDFIUM = threading.RLock()
