"""Command-line binaries of official_spanbert (installed as official_spanbert_tools)."""
