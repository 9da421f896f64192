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

"""A process that serves one tiny SavedModel to the property tests.

The property tests (tests/test_properties_*.py) send every request
here through property_harness.SignatureWorker, so that a request that never
returns is a failure with its example (the harness kills this process after
its time bound and starts another), not a test run that blocks, and so that
memory is measured in a process that serves nothing else.

Without a SavedModel in `export_dir` the process exports one there (a
1-layer, hidden-32 model of `kind`, random weights) and exits; with one it
loads it and serves requests until its stdin closes.

Usage (stdin/stdout carry length-prefixed pickles; see property_harness):
  python tests/property_worker.py KIND VOCAB LOWER_CASE EXPORT_DIR

Example:
  python tests/property_worker.py qa tests/fixtures/vocab_excerpt.txt \
      0 /tmp/qa_export
"""

import os
import pickle
import struct
import sys

KINDS = ("pretraining", "qa", "classify", "ner", "coref")
# Window lengths of the exports (tiny, so long texts make many windows).
SEQ = {"pretraining": 32, "qa": 32, "classify": 24, "ner": 64, "coref": 32}
NER_WIDTH = 30
SMALL = {"hidden_size": 32, "intermediate_size": 64, "num_layers": 1,
         "num_attention_heads": 2}


def rss_bytes() -> int:
  """This process's resident set size."""
  with open("/proc/self/status", encoding="ascii") as f:
    for line in f:
      if line.startswith("VmRSS:"):
        return int(line.split()[1]) * 1024
  return 0


def _encoder(params, vocab):
  enc = params.task.model.encoder.bert_v2
  for k, v in SMALL.items():
    setattr(enc, k, v)
  enc.vocab_size = sum(1 for _ in open(vocab, encoding="utf-8"))
  enc.dropout_rate = enc.attention_dropout_rate = 0.0
  return params


def _module(kind, vocab, lower_case):
  """The serving module of a random tiny model of `kind`."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tf_keras  # pylint: disable=g-import-not-at-top
  from official.core import exp_factory  # pylint: disable=g-import-not-at-top
  from official_spanbert import registry_imports  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  tf_keras.utils.set_random_seed(1)
  seq = SEQ[kind]
  if kind == "pretraining":
    from official_spanbert.modeling import builder  # pylint: disable=g-import-not-at-top
    from official_spanbert.serving import pretraining_module  # pylint: disable=g-import-not-at-top
    params = _encoder(exp_factory.get_exp_config("spanbert/pretraining"),
                      vocab)
    model = builder.build_pretrainer(params.task.model)
    return pretraining_module.SpanBertServingModule(
        model, vocab, lower_case, seq, top_k=4, max_masks=3)
  if kind == "qa":
    from official.core import task_factory  # pylint: disable=g-import-not-at-top
    from official_spanbert.serving import qa_module  # pylint: disable=g-import-not-at-top
    params = _encoder(exp_factory.get_exp_config("spanbert/squad_v1"), vocab)
    model = task_factory.get_task(
        params.task.replace(validation_data=None)).build_model()
    return qa_module.QuestionAnsweringModule(
        model, vocab, lower_case, seq_length=seq, doc_stride=8,
        query_length=8)
  if kind == "classify":
    from official.core import task_factory  # pylint: disable=g-import-not-at-top
    from official_spanbert.serving import classify_module  # pylint: disable=g-import-not-at-top
    params = _encoder(exp_factory.get_exp_config("spanbert/classification"),
                      vocab)
    params.task.model.num_classes = 2
    model = task_factory.get_task(params.task.replace(
        train_data=None, validation_data=None)).build_model()
    return classify_module.ClassifyModule(model, vocab, lower_case,
                                          seq_length=seq,
                                          label_names=("no", "yes"))
  if kind == "ner":
    from official_spanbert.serving import ner_module  # pylint: disable=g-import-not-at-top
    from official_spanbert.tasks import span_ner  # pylint: disable=g-import-not-at-top
    params = _encoder(exp_factory.get_exp_config("spanbert/span_ner"), vocab)
    model_config = params.task.model
    model_config.max_span_width, model_config.ffnn_size = NER_WIDTH, 32
    model_config.dropout_rate = 0.0
    model = span_ner.SpanNerTask(params.task).build_model()
    module = ner_module.SpanNerServingModule(model, vocab, lower_case, seq)
    w = module.windows(tf.constant(["Build the model."]))
    model(w.features)
    # Every candidate span is an entity (label O never wins) with a
    # probability of 1.0 (logit gaps of hundreds): single-word spans cross
    # nothing, so each of the served words comes back as an entity.
    rng = np.random.default_rng(7)
    for v in model.label_scorer.variables:
      value = rng.normal(0.0, 1.0, v.shape)
      if v.shape[-1] == 7:
        value *= 30.0
        value[..., 0] = 0.0
        if len(v.shape) == 1:
          value[0] = -1e4
      v.assign(value.astype(np.float32))
    return module
  if kind == "coref":
    from official_spanbert.serving import coref_module  # pylint: disable=g-import-not-at-top
    from official_spanbert.tasks import coreference  # pylint: disable=g-import-not-at-top
    params = _encoder(exp_factory.get_exp_config("spanbert/coref"), vocab)
    m = params.task.model
    m.ffnn_size, m.max_span_width, m.dropout_rate = 32, 10, 0.0
    model = coreference.build_model(m)
    # Singletons on: every top span of the untrained model is a mention.
    return coref_module.CorefServingModule(
        model, vocab, lower_case, max_segment_len=seq,
        predict_singletons=True)
  raise ValueError(f"kind {kind!r} is not one of {KINDS}")


def export(kind, vocab, lower_case, export_dir):
  """Saves the tiny model of `kind` to `export_dir` (property_harness
  calls it in the test's process)."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  module = _module(kind, vocab, lower_case)
  signatures = module.signatures()
  partial = export_dir + f".partial-{os.getpid()}"
  tf.saved_model.save(module, partial, signatures=signatures)
  os.replace(partial, export_dir)


def _send(out, message) -> None:
  data = pickle.dumps(message)
  out.write(struct.pack("<Q", len(data)) + data)
  out.flush()


def _receive(inp):
  head = inp.read(8)
  if len(head) < 8:
    return None
  return pickle.loads(inp.read(struct.unpack("<Q", head)[0]))


def main(argv) -> None:
  kind, vocab, lower_case, export_dir = argv[1:5]
  if not os.path.exists(os.path.join(export_dir, "saved_model.pb")):
    import official_spanbert  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
    export(kind, vocab, lower_case == "1", export_dir)
    return
  # Serving needs TensorFlow and tf.text only: a lean process, whose memory
  # is the model's.
  os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
  # The pickles own stdout: whatever prints goes to stderr.
  out = os.fdopen(os.dup(1), "wb")
  os.dup2(2, 1)
  inp = os.fdopen(0, "rb")
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import tensorflow_text  # noqa: F401  pylint: disable=g-import-not-at-top,unused-import
  loaded = tf.saved_model.load(export_dir)
  _send(out, ("ready", sorted(loaded.signatures), rss_bytes()))
  while True:
    request = _receive(inp)
    if request is None:
      return
    name, inputs = request
    try:
      result = loaded.signatures[name](
          **{k: tf.constant(v) for k, v in inputs.items()})
      _send(out, ("ok", {k: v.numpy() for k, v in result.items()},
                  rss_bytes()))
    except (tf.errors.InvalidArgumentError, ValueError, TypeError) as e:
      message = getattr(e, "message", str(e))
      _send(out, ("error", type(e).__name__, message, rss_bytes()))


if __name__ == "__main__":
  main(sys.argv)
