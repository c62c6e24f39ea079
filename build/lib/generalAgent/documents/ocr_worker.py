"""The OCR engine's own process: reads page images from stdin, answers RapidOCR's lines on stdout.

Run as a script (`python ocr_worker.py`), never imported by the agent: it imports only
numpy and RapidOCR. documents/ocr.py starts it the first time a page needs OCR, sends it
one page at a time and kills it when the call is cancelled or OCR has been idle a while:
a killed process stops using the CPU at once, which a thread inside onnxruntime cannot
be made to do, and the engine's memory is never the agent's.

Protocol, little-endian: a request is the page's height and width (two uint32) and its
grayscale pixels (height x width bytes); the answer is a uint32 length and that many
bytes of JSON, a list of [box (four [x, y] points), text, confidence]. One byte b"R" says
the engine is loaded. Ctrl-C in the terminal ends this process at once (default SIGINT).
"""

from __future__ import annotations

import json
import signal
import struct
import sys
from typing import Any


def read_exactly(stream: Any, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        piece = stream.read(size - len(data))
        if not piece:
            break
        data += piece
    return bytes(data)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # stop now, not after the page
    import numpy as np
    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR()
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    answers.write(b"R")
    answers.flush()
    while True:
        head = read_exactly(requests, 8)
        if len(head) < 8:
            return  # the agent closed the pipe: OCR is idle, or the agent ended
        height, width = struct.unpack("<II", head)
        pixels = read_exactly(requests, height * width)
        if len(pixels) < height * width:
            return
        found, _ = engine(np.frombuffer(pixels, dtype=np.uint8).reshape(height, width))
        lines = [
            [[[float(x), float(y)] for x, y in box], str(text), float(confidence)]
            for box, text, confidence in (found or [])
        ]
        payload = json.dumps(lines, ensure_ascii=False).encode("utf-8")
        answers.write(struct.pack("<I", len(payload)) + payload)
        answers.flush()


if __name__ == "__main__":
    main()
