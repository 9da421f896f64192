"""official_spanbert.tasks."""
