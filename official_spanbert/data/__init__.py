"""official_spanbert.data."""
