"""The web app: static files (`static/`), and what the server makes of them (`worker.py`)."""
