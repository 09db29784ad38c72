"""Capture first, curate later: chat captures kept at once, and durable ingestion agents that
turn them into pages.

`items` normalizes what arrives (a capture, a provider's meeting transcript) into a source item;
`pipeline` keeps it canonical at once (an inbox draft, an evidence snapshot) and queues a
`curate` job; the job runs `rules` (no model) or `agent` (a model whose only tools, in `tools`,
are the brain graph's operations, under the instructions in `prompts`).
"""
