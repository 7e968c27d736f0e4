"""How the stub agents echo a prompt: text in runs of whole words, at most
:data:`MAX_CHUNKS_PER_BLOCK` a block, other blocks as they came."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["MAX_CHUNKS_PER_BLOCK", "echoes", "text_chunks"]

#: Text blocks are streamed back in at most this many updates each.
MAX_CHUNKS_PER_BLOCK = 64
_WORD = re.compile(r"\S+\s*|\s+")


def text_chunks(text: str, most: int = MAX_CHUNKS_PER_BLOCK) -> list[str]:
    """Split ``text`` into at most ``most`` runs of whole words that join back to ``text``."""
    if not text:
        return []
    target = max(1, math.ceil(len(text) / most))
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for word in _WORD.findall(text):
        current.append(word)
        size += len(word)
        if size >= target:
            chunks.append("".join(current))
            current, size = [], 0
    if current:
        chunks.append("".join(current))
    return chunks


def echoes(prompt: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The content blocks that echo ``prompt``: text in runs of words, other blocks as they are."""
    for block in prompt:
        if block.get("type") == "text":
            for chunk in text_chunks(block["text"]):
                yield {"type": "text", "text": chunk}
        else:
            yield block
