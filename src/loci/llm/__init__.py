"""Chat models behind one small interface: any OpenAI-compatible endpoint."""
