"""official_spanbert.modeling."""
