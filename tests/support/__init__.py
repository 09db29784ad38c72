"""What the suites share, one module per concept; test modules import from here, never from one
another (tests/test_layout.py checks it), and conftest.py keeps only fixtures and pytest hooks.

- a Loci service and its CLI: services (a service or store on either backend, a live server
  over one), cli, live_server, waiting, folders, asking, access, people
- files to feed Loci, made at test time: text_files, pdf_files, office_files, mail_files,
  image_files, audio_files, graph_pages, web_pages, word_chunks, reference_tokenizer
- stand-ins on loopback: loopback, scripted_llm, scripted_stt, fake_embeddings, fake_slack,
  slack, oidc_provider, oauth_flow, mcp_http, mcp_results
- the browser: browser, web_app, accessibility; PostgreSQL: pg
"""
