"""Answers grounded in a brain: route, adapt, rewrite, expand, search, grade, answer.

Every step asks the chat model when one is configured and has a fallback that needs none, so
`loci ask` answers honestly from the sources on a fresh install.
"""
