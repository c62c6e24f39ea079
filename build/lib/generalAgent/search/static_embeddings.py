"""Static embeddings (model2vec's format): a vector per token, averaged over a text's tokens.

A model2vec model is a folder with `tokenizer.json` (Hugging Face tokenizers), a
`model.safetensors` holding `embeddings` (one row per token; `weights` and `mapping` in
vocabulary-quantized models) and a `config.json` (`normalize`). Encoding a text is a
tokenizer call and a mean of rows, so it needs numpy, safetensors and tokenizers only
(no torch, no model2vec package) and embeds thousands of chunks a second on one core.
This mirrors `StaticModel.encode` of model2vec 0.10 (MIT): tokens without special tokens,
the unknown token dropped, at most `max_length` tokens, the mean, then (if the model says
so) unit length; search/embeddings.py normalises every vector anyway.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MAX_TOKENS = 512  # model2vec's default: a chunk of 400 characters is well below it


def is_static_model(folder: Path) -> bool:
    """Whether `folder` holds a model in model2vec's format."""
    if not ((folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file()):
        return False
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    if isinstance(config, dict) and config.get("model_type") == "model2vec":
        return True
    from safetensors import safe_open

    with safe_open(str(folder / "model.safetensors"), framework="numpy") as tensors:
        return "embeddings" in tensors.keys()  # noqa: SIM118 (safe_open is not a mapping)


class StaticModel:
    """A model2vec model loaded from `folder` (see the module)."""

    def __init__(self, folder: Path) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        with safe_open(str(folder / "model.safetensors"), framework="numpy") as tensors:
            names = set(tensors.keys())  # noqa: SIM118
            self.embeddings: Any = tensors.get_tensor("embeddings").astype(np.float32)
            self.weights: Any = tensors.get_tensor("weights") if "weights" in names else None
            self.mapping: Any = tensors.get_tensor("mapping") if "mapping" in names else None
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            config = {}
        self.normalize = bool(config.get("normalize", False)) if isinstance(config, dict) else False
        vocabulary = self.tokenizer.get_vocab()
        unknown = getattr(self.tokenizer.model, "unk_token", None)
        self.unknown_id: int | None = vocabulary.get(unknown) if unknown else None
        lengths = sorted(len(token) for token in vocabulary)
        # Texts are cut to MAX_TOKENS x the median token length before tokenizing, as model2vec does.
        self.max_chars = MAX_TOKENS * max(1, lengths[len(lengths) // 2] if lengths else 1)

    @property
    def dimensions(self) -> int:
        return int(self.embeddings.shape[1])

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        encodings = self.tokenizer.encode_batch(
            [t[: self.max_chars] for t in texts], add_special_tokens=False
        )
        vectors = []
        for encoding in encodings:
            ids = [i for i in encoding.ids if i != self.unknown_id][:MAX_TOKENS]
            if not ids:
                vectors.append(np.zeros(self.dimensions, dtype=np.float32))
                continue
            rows = self.embeddings[self.mapping[ids] if self.mapping is not None else ids]
            if self.weights is not None:
                rows = rows * self.weights[ids][:, None]
            vectors.append(rows.mean(axis=0))
        matrix = np.stack(vectors) if vectors else np.zeros((0, self.dimensions), dtype=np.float32)
        if self.normalize:
            matrix = matrix / (np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-32)
        return [list(map(float, row)) for row in matrix]
