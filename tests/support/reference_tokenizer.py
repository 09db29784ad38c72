"""The shipped tokenizer.json loaded the plain way — no truncation, no padding, none of
LocalEmbedder's settings or memos — as the reference the token-count tests check against."""

from __future__ import annotations

from importlib import resources

from tokenizers import Tokenizer


def shipped_tokenizer() -> Tokenizer:
    raw = (resources.files("loci.embed") / "model" / "tokenizer.json").read_text(encoding="utf-8")
    tokenizer = Tokenizer.from_str(raw)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def plain_count(tokenizer: Tokenizer, text: str) -> int:
    """The tokens of `text` alone, without the special tokens the model adds around it."""
    return len(tokenizer.encode(text, add_special_tokens=False).ids)
