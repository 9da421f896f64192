"""official_spanbert.serving."""
