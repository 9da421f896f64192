# Copyright 2026 The official_spanbert Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""What the serving property tests share (issue 55 item 9).

  SignatureWorker   one tiny export served in a process of its own
                    (tests/property_worker.py): a call that outlives its time
                    bound kills the process and fails with the example
  texts(), batches()  Hypothesis strategies of the text people send
  Words             the words a model was trained on (BERT's basic
                    tokenization, computed here in Python, not by the
                    tokenizer under test) and the wordpiece boundaries
                    inside them
  uncased_excerpt() an uncased vocab from the committed cased excerpt
  serve()           the export a test file's module fixture serves

Hypothesis profiles: "ci" (the default; a fixed, derandomized budget) and
"dev" (HYPOTHESIS_PROFILE=dev: 10x the examples, random).

Example:
  worker = SignatureWorker("qa", vocab, False, str(tmp / "qa"))
  out = worker.call("answer", question=["Who?"], context=["Ann met Bob."])
"""

import os
import pickle
import select
import struct
import subprocess
import sys
import time
import unicodedata

from hypothesis import HealthCheck
from hypothesis import settings
from hypothesis import strategies as st
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# A call's time bound. A tiny model answers in milliseconds; the bound is
# for a loaded 2-core machine. SPANBERT_PROPERTY_CALL_SECONDS changes it.
CALL_SECONDS = float(os.environ.get("SPANBERT_PROPERTY_CALL_SECONDS", "10"))
# The first start exports the model: minutes on a loaded machine.
START_SECONDS = 600.0

# One failure a test, shrunk (an xfail names the exception it expects).
_COMMON = dict(deadline=None, database=None, print_blob=True,
               report_multiple_bugs=False,
               suppress_health_check=[HealthCheck.too_slow,
                                      HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=12, derandomize=True, **_COMMON)
settings.register_profile("dev", max_examples=120, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


class Hang(AssertionError):
  """A call did not return within its bound (its worker was killed)."""


class NotOnWords(AssertionError):
  """An offset, span or word of the served model that is not where the
  words the model was trained on put it."""


class Refused(Exception):
  """The signature refused the request (an InvalidArgumentError et al.)."""

  def __init__(self, kind: str, message: str):
    super().__init__(f"{kind}: {message}")
    self.message = message


def _send(stream, message) -> None:
  data = pickle.dumps(message)
  stream.write(struct.pack("<Q", len(data)) + data)
  stream.flush()


def _read_exactly(fd: int, n: int, deadline: float) -> bytes:
  chunks, got = [], 0
  while got < n:
    left = deadline - time.monotonic()
    if left <= 0 or not select.select([fd], [], [], left)[0]:
      raise TimeoutError
    chunk = os.read(fd, n - got)
    if not chunk:
      raise EOFError
    chunks.append(chunk)
    got += len(chunk)
  return b"".join(chunks)


class SignatureWorker:
  """A tiny export of `kind` (property_worker.KINDS) served by a process.

  Args:
    kind, vocab, lower_case: the model (property_worker.py builds it).
    export_dir: where the first start exports it; restarts load it.
    call_seconds: a call's time bound.
  """

  def __init__(self, kind: str, vocab: str, lower_case: bool,
               export_dir: str, warmup, call_seconds: float = CALL_SECONDS):
    self.args = [kind, vocab, "1" if lower_case else "0", export_dir]
    self.vocab = read_vocab(vocab)
    self.lower_case = lower_case
    self.warmup = warmup
    self.call_seconds = call_seconds
    self.process = None
    # After a first hang, a loaded process waits beside the serving one, so
    # that Hypothesis' shrinking of a hang costs the time bound per example,
    # not a restart too.
    self.spare = None
    self.signatures = ()
    self.rss = 0
    self.starts = 0
    self._start()

  def _popen(self):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [REPO] + [p for p in os.environ.get("PYTHONPATH", "").split(
            os.pathsep) if p]), TF_CPP_MIN_LOG_LEVEL="3")
    env.setdefault("TF_NUM_INTRAOP_THREADS", "1")
    env.setdefault("TF_NUM_INTEROP_THREADS", "1")
    command = [sys.executable, os.path.join(HERE, "property_worker.py")]
    if not os.path.exists(os.path.join(self.args[-1], "saved_model.pb")):
      # Exported here, in the test process that has TensorFlow and the
      # package imported already: a process of its own for the export
      # paid ~10 s of CPU to import them again (AVX2 EPYC). Only serving
      # needs the lean process below.
      import property_worker  # pylint: disable=g-import-not-at-top
      kind, vocab, lower_case, export_dir = self.args
      property_worker.export(kind, vocab, lower_case == "1", export_dir)
    return subprocess.Popen(  # pylint: disable=consider-using-with
        command + self.args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env=env)

  def _start(self) -> None:
    self.process, self.spare = self.spare or self._popen(), None
    self.starts += 1
    status, self.signatures, self.rss = self._reply(START_SECONDS)
    assert status == "ready", status
    for signature, inputs in self.warmup:
      _send(self.process.stdin, (signature, _arrays(inputs)))
      reply = self._reply(START_SECONDS)
      assert reply[0] == "ok", reply

  def _reply(self, seconds: float):
    fd = self.process.stdout.fileno()
    deadline = time.monotonic() + seconds
    head = _read_exactly(fd, 8, deadline)
    return pickle.loads(_read_exactly(fd, struct.unpack("<Q", head)[0],
                                      deadline))

  def kill(self, spare: bool = False) -> None:
    """Ends the serving process (its spare too with spare=True)."""
    for process in (self.process, self.spare if spare else None):
      if process is not None and process.poll() is None:
        process.kill()
        process.wait()
    self.process = None

  def call(self, signature: str, **inputs):
    """{output: numpy array} of one request; Refused for a refusal, Hang
    when the call outlives call_seconds."""
    if self.process is None:
      self._start()
    inputs = _arrays(inputs)
    started = time.monotonic()
    try:
      _send(self.process.stdin, (signature, inputs))
      reply = self._reply(self.call_seconds)
    except TimeoutError:
      self.kill()
      self.spare = self.spare or self._popen()
      self._start()
      self.spare = self._popen()
      raise Hang(f"{signature} did not return within {self.call_seconds:.0f}"
                 f" s (its worker was killed) on {inputs!r}") from None
    except (EOFError, BrokenPipeError):
      code = self.process.poll()
      self.kill()
      raise AssertionError(f"{signature}'s worker died (exit {code}) on "
                           f"{inputs!r}") from None
    self.seconds = time.monotonic() - started
    self.rss = reply[-1]
    if reply[0] == "error":
      raise Refused(reply[1], reply[2])
    return reply[1]

  def close(self) -> None:
    if self.process is not None and self.process.poll() is None:
      self.process.stdin.close()
      try:
        self.process.wait(10)
      except subprocess.TimeoutExpired:
        pass
    self.kill(spare=True)


def _arrays(inputs):
  """Request values as arrays: strings as objects, integers as int32."""
  out = {}
  for k, v in inputs.items():
    v = np.asarray(v, dtype=object if _is_text(v) else None)
    out[k] = v.astype(np.int32) if v.dtype.kind == "i" else v
  return out


def _is_text(value) -> bool:
  flat = np.asarray(value, dtype=object).ravel()
  return flat.size > 0 and isinstance(flat[0], (str, bytes))


# Texts ---------------------------------------------------------------------

# Natural English as LitBank detokenized has it: no space before
# , . ; : ! ? ) ’ 's n't, none after ( “ ‘.
NATURAL = (
    "Mr. Bennet, who lived in London.",
    "“Is it?” said Elizabeth; she didn't know.",
    "Jane's sister (the younger one) laughed!",
    "They went to Netherfield: it rained.",
    "Mrs. Long’s niece can't come, she said.",
    "It is a truth universally acknowledged.",
)
WORDS = ("Mr.", "Bennet", "London", "the", "house", "Elizabeth", "Jane",
         "said", "of", "sister", "went", "to", "Netherfield", "it", "a")
PUNCTUATION = (",", ".", ";", ":", "!", "?", ")", "’", "'s", "n't", "—", "-")
OPENING = ("(", "“", "‘", "\"")
SPACES = (" ", "  ", "\n", "\t", "\u3000", "\xa0", "\r\n")
# Characters the tokenizer drops or reads as space.
INVISIBLE = ("\u200b", "\x00", "\x07", "\u200d", "\ufeff", "\x1f")
COMBINING = ("\u0301", "\u0308", "\u0327")
ACCENTED = ("Zoë", "Ångström", "café", "naïve", "Müller", "façade", "Dvořák")
THAI = "ภาษาไทยเป็นภาษาที่ไม่เว้นวรรค"  # an unspaced script: one word
CJK = "東京都に住んでいる"
# Words of more than 100 UTF-8 bytes: one [UNK] each.
LONG = (THAI * 2, "ACGT" * 30, "x" * 101,
        "aGVsbG8gd29ybGQ" * 8, "https://example.org/" + "a/b" * 30)


def _word():
  return st.one_of(
      st.sampled_from(WORDS), st.sampled_from(ACCENTED),
      st.sampled_from(LONG), st.sampled_from((THAI[:7], THAI, CJK)),
      st.text(st.characters(codec="utf-8", exclude_categories=("Cs",),
                            exclude_characters="\ufffd"),
              min_size=1, max_size=4),
      st.builds(lambda w, m: w + m, st.sampled_from(WORDS),
                st.sampled_from(COMBINING)))


def _phrase():
  """Words with attached punctuation and odd separators."""
  token = st.one_of(
      _word(),
      st.builds(lambda o, w: o + w, st.sampled_from(OPENING), _word()),
      st.builds(lambda w, p: w + p, _word(), st.sampled_from(PUNCTUATION)))
  return st.lists(st.tuples(token, st.sampled_from(SPACES + INVISIBLE)),
                  min_size=1, max_size=8).map(
                      lambda parts: "".join(w + s for w, s in parts))


def texts():
  """One text as people send it (or as nobody should, but someone will)."""
  return st.one_of(
      st.sampled_from(NATURAL), st.just(""),
      st.lists(st.sampled_from(SPACES + INVISIBLE), min_size=1,
               max_size=4).map("".join),
      st.sampled_from(LONG), _phrase(),
      st.builds(lambda a, w, b: a + " " + w + " " + b,
                st.sampled_from(NATURAL), st.sampled_from(LONG),
                st.sampled_from(NATURAL)),
      st.builds(lambda a, b: a + " " + b, st.sampled_from(NATURAL),
                _phrase()))


def batches(min_size: int = 1, max_size: int = 4):
  """Requests of several texts, mixing every kind of texts()."""
  return st.lists(texts(), min_size=min_size, max_size=max_size)


# The words a model was trained on -------------------------------------------


def _is_punctuation(c: str) -> bool:
  """BERT's _is_punctuation: ASCII symbols and Unicode P*."""
  cp = ord(c)
  if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
    return True
  return unicodedata.category(c).startswith("P")


def _is_cjk(c: str) -> bool:
  cp = ord(c)
  return any(a <= cp <= b for a, b in (
      (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF),
      (0x2A700, 0x2B73F), (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF),
      (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


def _is_gap(c: str) -> bool:
  """Whitespace, or a character BERT's basic tokenizer drops."""
  return (c.isspace() or c in "\x00\ufffd" or
          unicodedata.category(c) in ("Cc", "Cf", "Zs", "Zl", "Zp"))


def _normal(c: str, lower_case: bool) -> str:
  """What the basic tokenizer reads for one character."""
  if lower_case and unicodedata.category(c) == "Cf":
    return ""  # NFKC_Casefold drops the default ignorables (U+200B, BOM)
  if _is_gap(c):
    return " "
  if lower_case:
    c = unicodedata.normalize("NFKC", c).casefold()
    c = "".join(x for x in unicodedata.normalize("NFD", c)
                if unicodedata.category(x) != "Mn")
  return c


class Words:
  """The basic tokenizer's words of `text` as character spans [start, end)
  of the original text, and their wordpiece boundaries under `vocab`.

  A word ends after the combining marks that follow it. A word of more
  than 100 bytes, or one a piece of which is not in the vocab, is one
  [UNK]: no boundary inside it.
  """

  def __init__(self, text: str, vocab: frozenset, lower_case: bool):
    self.text = text
    normal = [_normal(c, lower_case) for c in text]
    spans, start = [], None
    for i, (c, n) in enumerate(zip(text, normal)):
      if n == "":  # dropped (an uncased mark): part of what precedes it
        continue
      alone = " " in n or any(_is_punctuation(x) or _is_cjk(x) for x in n)
      if start is not None and (alone or n == " "):
        spans.append((start, i))
        start = None
      if n == " ":
        continue
      if alone:
        spans.append((i, i + 1))
      elif start is None:
        start = i
    if start is not None:
      spans.append((start, len(text)))
    # A word ends after the characters that follow it and are dropped.
    self.spans = []
    for s, e in spans:
      while e < len(text) and normal[e] == "":
        e += 1
      self.spans.append((s, e))
    self.starts = {s for s, _ in self.spans}
    self.ends = {e for _, e in self.spans}
    self.inner = set()
    for s, e in self.spans:
      self.inner |= _piece_boundaries(text, normal, s, e, vocab)

  def boundaries(self) -> set:
    return self.starts | self.ends | self.inner


def _piece_boundaries(text, normal, s, e, vocab) -> set:
  """Offsets strictly inside word [s, e) where greedy WordPiece cuts it."""
  pieces = "".join(normal[s:e])
  if len(pieces.encode("utf-8")) > 100:
    return set()
  # Character i of the normalized word -> the original offset after it.
  after = []
  for i in range(s, e):
    after += [i + 1] * len(normal[i])
  cuts, at = set(), 0
  while at < len(pieces):
    end = len(pieces)
    while end > at and (("##" if at else "") + pieces[at:end]) not in vocab:
      end -= 1
    if end == at:
      return set()  # [UNK] for the whole word
    if end < len(pieces):
      cuts.add(after[end - 1])
    at = end
  return {c for c in cuts if s < c < e}


def read_vocab(path: str) -> frozenset:
  with open(path, encoding="utf-8") as f:
    return frozenset(line.rstrip("\n") for line in f)


def uncased_excerpt(cased: str, path: str) -> str:
  """An uncased vocab: the cased excerpt's entries lower-cased (first
  kept), the special tokens as they are."""
  seen, out = set(), []
  with open(cased, encoding="utf-8") as f:
    for line in f:
      token = line.rstrip("\n")
      if not (token.startswith("[") and token.endswith("]")):
        token = token.lower()
      if token not in seen:
        seen.add(token)
        out.append(token)
  with open(path, "w", encoding="utf-8") as f:
    f.write("\n".join(out) + "\n")
  return path


def serve(kind: str, request, cased_vocab: str, tmp_path_factory, warmup):
  """Yields a SignatureWorker of a fresh export of `kind`, and closes it:
  the body of a test file's module fixture, parametrized by case ("cased":
  `cased_vocab`; "uncased": its lower-cased copy, uncased_excerpt).

  Example (defined in the test file, so that tests/conftest.py keeps the
  file's tests on one xdist worker):
    @pytest.fixture(scope="module", params=["cased", "uncased"])
    def qa(request, small_vocab, tmp_path_factory):
      yield from property_harness.serve("qa", request, small_vocab,
                                        tmp_path_factory, WARMUP)
  """
  lower_case = request.param == "uncased"
  vocab = cased_vocab
  if lower_case:
    vocab = uncased_excerpt(cased_vocab, str(
        tmp_path_factory.mktemp("vocab") / "uncased.txt"))
  process = SignatureWorker(kind, vocab, lower_case,
                            str(tmp_path_factory.mktemp(kind) / "export"),
                            warmup)
  try:
    yield process
  finally:
    process.close()


def has_words(text: str) -> bool:
  """Whether the text has a word (so at least one wordpiece)."""
  return bool(Words(text, frozenset(), False).spans)


def check_spans(text: str, starts, ends, allowed_starts, allowed_ends,
                what: str) -> None:
  """Each [start, end) (end exclusive; -1, -1 is padding) is non-empty and
  starts and ends where the model's words allow."""
  for s, e in zip(starts, ends):
    s, e = int(s), int(e)
    if s == -1 and e == -1:
      continue
    assert 0 <= s < e <= len(text), (what, text, s, e)
    if s not in allowed_starts or e not in allowed_ends:
      raise NotOnWords(
          f"{what} [{s}, {e}) = {text[s:e]!r} of {text!r} does not start "
          f"and end on the words the model was trained on (starts "
          f"{sorted(allowed_starts)}, ends {sorted(allowed_ends)})")


def decoded(value) -> str:
  return value.decode("utf-8", errors="replace") if isinstance(
      value, bytes) else str(value)


def rss_growth(worker: "SignatureWorker", signature: str, rounds: int = 12,
               warm: int = 3, **inputs) -> int:
  """The worker's RSS growth (bytes) over `rounds` calls after `warm`."""
  for _ in range(warm):
    worker.call(signature, **inputs)
  before = worker.rss
  for _ in range(rounds):
    worker.call(signature, **inputs)
  return worker.rss - before


# What a request may add to a worker's RSS once warm, over 12 calls.
RSS_GROWTH_BYTES = 32 << 20


# encode_spans ---------------------------------------------------------------

# Lengths of the special tokens, and short ones: a span computed from a
# token's string instead of its word's characters (issue 55 item 3: an [UNK]
# of 5 characters) ends that far into the word.
CUT_LENGTHS = (len("[UNK]"), len("[CLS]") + 1, 1, 2, 3)


def word_spans(words: Words, most: int = 4):
  """Up to `most` spans of one word or two consecutive words."""
  spans = list(words.spans)
  pairs = [(a[0], b[1]) for a, b in zip(spans, spans[1:])]
  return (spans[:most // 2 + most % 2] + pairs[:most // 2])[:most]


def padded(rows, pad=-1):
  """[batch, n] of ragged rows of ints (pad: -1)."""
  n = max((len(r) for r in rows), default=0)
  return np.array([list(r) + [pad] * (n - len(r)) for r in rows],
                  np.int32).reshape(len(rows), n)


def check_encode_spans(worker: SignatureWorker, batch) -> None:
  """Spans of words are encoded (finite; zeros for padding) and each row
  of the batch gets what it gets alone."""
  words = [Words(t, worker.vocab, worker.lower_case) for t in batch]
  spans = [word_spans(w) for w in words]
  starts = padded([[s for s, _ in r] for r in spans])
  ends = padded([[e for _, e in r] for r in spans])
  out = worker.call("encode_spans", text=batch, span_starts=starts,
                    span_ends=ends)["span_embeddings"]
  assert np.isfinite(out).all(), batch
  assert (out[starts < 0] == 0).all(), batch
  for i, text in enumerate(batch):
    if not spans[i]:
      continue
    alone = worker.call("encode_spans", text=[text],
                        span_starts=starts[i:i + 1],
                        span_ends=ends[i:i + 1])["span_embeddings"]
    np.testing.assert_allclose(out[i:i + 1], alone, rtol=1e-4, atol=1e-5,
                               err_msg=f"row {i} of {batch!r}")


def cut_inside_a_word(text: str, words: Words, data):
  """(start, end) of a span from a word's start to inside its first
  wordpiece (so it covers no whole wordpiece), or None when no word has
  room. In a word of one [UNK], anywhere inside the word."""
  del text
  def first_piece_end(span):
    return min((c for c in words.inner if span[0] < c < span[1]),
               default=span[1])
  # Longest first: Hypothesis shrinks toward the first, and the longest
  # words (one [UNK] past 100 bytes) are where offsets go wrong.
  room = sorted((span for span in words.spans
                 if first_piece_end(span) - span[0] >= 2),
                key=lambda span: span[0] - first_piece_end(span))
  if not room:
    return None
  s, e = data.draw(st.sampled_from(room), label="word")
  cuts = list(range(s + 1, first_piece_end((s, e))))
  preferred = [s + n for n in CUT_LENGTHS if s + n in cuts]
  cut = data.draw(st.sampled_from(preferred) if preferred
                  else st.sampled_from(cuts), label="cut")
  return s, cut


def check_cut_word_is_refused(worker: SignatureWorker, text: str,
                              data) -> None:
  """A span inside a word's first wordpiece covers no wordpiece (the
  signature embeds the wordpieces inside a span): refused by name."""
  words = Words(text, worker.vocab, worker.lower_case)
  span = cut_inside_a_word(text, words, data)
  if span is None:
    return
  try:
    worker.call("encode_spans", text=[text], span_starts=[[span[0]]],
                span_ends=[[span[1]]])
  except Refused as e:
    assert "covers no wordpiece" in e.message, e.message
    return
  raise NotOnWords(
      f"encode_spans accepted [{span[0]}, {span[1]}) = "
      f"{text[span[0]:span[1]]!r}, which lies inside the first wordpiece "
      f"of a word of {text!r} (covers no wordpiece)")
