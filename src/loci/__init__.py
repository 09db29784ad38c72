"""Loci: a self-hosted second brain for people and their AI agents."""

__version__ = "0.1.0"
