"""The end-to-end demo (`make demo`, `spanbert-demo`): see pipeline.py.

corpus.py (the embedded standard-library corpus) imports no TensorFlow; the
pipeline's names are loaded on first use, so `spanbert-build-demo-corpus`
stays light.
"""

_PIPELINE_NAMES = ("console_main", "run_demo", "DEFAULT_SENTENCE",
                   "DEFAULT_STEPS")


def __getattr__(name):
  if name in _PIPELINE_NAMES:
    from official_spanbert.demo import pipeline  # pylint: disable=g-import-not-at-top
    return getattr(pipeline, name)
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
