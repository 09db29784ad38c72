"""Who is asking and what they may do: tokens, web sessions and per-brain access."""
