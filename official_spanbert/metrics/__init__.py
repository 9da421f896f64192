"""official_spanbert.metrics: official evaluation metrics."""
