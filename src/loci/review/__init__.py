"""Reviews of a brain over a period: what came in, what failed, what it is about (`digest`)."""
