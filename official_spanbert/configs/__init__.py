"""official_spanbert.configs."""
