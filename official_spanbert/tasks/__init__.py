"""SpanBERT tasks."""
