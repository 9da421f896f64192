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

r"""Accelerator memory and throughput on paper, for base and large at seq 512.

Per replica, in mixed bfloat16 with AdamW:
- weights and optimizer: parameters counted from the built models; fp32
  master weights, fp32 gradients and Adam's m and v (16 B per parameter),
  plus the bf16 copies the layers compute with (2 B);
- activations kept for the backward pass: per encoder layer and sequence
  s * h * (34 + 5 * a * s / h) bytes (Korthikanti et al. 2022, "Reducing
  Activation Recomputation", 16-bit activations, 1-byte dropout masks), plus
  the embeddings' output and the MLM and SBO heads at 80 masked positions
  (their bf16 logits and fp32 softmax, 6 B per logit);
- training FLOPs per sequence: 6 * (non-embedding parameters) * s + 12 * L
  * h * s^2 (attention) + 6 * 2 * 80 * h * V (the two tied projections),
  and the sequences/s one accelerator consumes at a stated MFU.

The per-layer activation figure is cross-checked on CPU: the peak bytes
tf.config.experimental.get_memory_info reports over one forward + backward
tf.function step of a small encoder (mixed_bfloat16, dropout on), the
difference between 4 and 2 layers divided by 2, less that layer's fp32
gradients, against the formula.

  .venv/bin/python -m benchmarks.memory_table
  .venv/bin/python -m benchmarks.memory_table --smoke   # seconds: tiny only
"""

import argparse
import os

# The cross-check reads the CPU allocator's peak, which only TensorFlow's BFC
# allocator keeps: its default where oneDNN is on by default (CPUs with
# AVX-512 VNNI / BF16 / AMX), not on an AVX2-only CPU ("Cannot reset memory
# stats for device 'CPU:0'"). Read before TensorFlow starts.
os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")

import official_spanbert  # noqa: E402,F401  (before tensorflow)
import tensorflow as tf
import tf_keras

from official.core import exp_factory
from official.core import task_factory
from official.modeling.hyperparams import params_dict
from official_spanbert import registry_imports  # noqa: F401
from official_spanbert.configs import yaml_files
from official_spanbert.modeling import span_bert_pretrainer
from benchmarks.common import machine, parse_args, report_rows

SEQ, PRED = 512, 80
GB = 1e9
# Dense bf16 peak TFLOP/s (vendor figures) and the MFU assumed.
ACCELERATORS = {"A100": 312, "H100 SXM": 989, "TPU v4 chip": 275}
MFU = 0.4
# Loader (parse + frame + span-mask) at seq 512, B=256: M tokens per CPU
# second, benchmarks/RESULTS.md, "Loader masking throughput".
LOADER_TOKENS_PER_CPU_S = 5.09e6


def params_of(size: str):
  params = exp_factory.get_exp_config("spanbert/pretraining")
  return params_dict.override_params_dict(
      params, yaml_files.path(f"models/{size}.yaml"),
      is_strict=True)


def parameter_counts(params):
  """(all trainable parameters, word + position + type embeddings)."""
  model = task_factory.get_task(params.task).build_model()
  model(span_bert_pretrainer.dummy_inputs(1, 8, 4))
  total = sum(int(tf.size(w)) for w in model.trainable_weights)
  enc = params.task.model.encoder.bert_v2
  embeddings = (enc.vocab_size + enc.max_position_embeddings +
                enc.type_vocab_size) * enc.hidden_size
  return total, embeddings


def layer_activation_bytes(s, h, a, b=1):
  return s * b * h * (34 + 5 * a * s / h)


def head_activation_bytes(h, v, b=1):
  """Embeddings' output (sum, LayerNorm, dropout: 5 B) per position, and two
  heads at PRED positions: bf16 logits + fp32 softmax, plus ~10 H-wide
  tensors per head (MLM transform, SBO's 2-layer MLP)."""
  return b * (SEQ * h * 5 + 2 * PRED * (6 * v + 10 * 2 * h))


def measured_layer_bytes(h=256, a=4, s=128, b=8):
  """(measured, formula) per-layer activation bytes of a small encoder on
  CPU (mixed_bfloat16, dropout on): the peak of a forward + backward
  tf.function step, (4 layers - 2 layers) / 2, less the layer's fp32
  gradients."""
  held = {}
  for layers in (2, 4):
    params = exp_factory.get_exp_config("spanbert/pretraining")
    enc = params.task.model.encoder.bert_v2
    enc.vocab_size, enc.hidden_size, enc.num_layers = 1000, h, layers
    enc.num_attention_heads, enc.intermediate_size = a, 4 * h
    enc.max_position_embeddings = s
    model = task_factory.get_task(params.task).build_model()
    encoder = model.encoder_network
    inputs = dict(input_word_ids=tf.ones([b, s], tf.int32),
                  input_mask=tf.ones([b, s], tf.int32),
                  input_type_ids=tf.zeros([b, s], tf.int32))

    @tf.function
    def step(encoder=encoder, inputs=inputs):
      with tf.GradientTape() as tape:
        out = encoder(inputs, training=True)["sequence_output"]
        loss = tf.reduce_sum(tf.cast(out, tf.float32))
      return tape.gradient(loss, encoder.trainable_variables)

    step()  # traced, variables and kernels ready
    tf.config.experimental.reset_memory_stats("CPU:0")
    before = tf.config.experimental.get_memory_info("CPU:0")["current"]
    grads = step()
    held[layers] = (tf.config.experimental.get_memory_info("CPU:0")["peak"] -
                    before)
    del grads
  # Less each layer's fp32 gradients (12 h^2 weights), also allocated.
  return ((held[4] - held[2]) / 2 - 12 * h * h * 4,
          layer_activation_bytes(s, h, a, b))


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--sizes", nargs="+", default=["base", "large"],
                  help="configs/models/*.yaml encoders to tabulate")
  ap.add_argument("--check", type=int, nargs=4, default=[256, 4, 128, 8],
                  metavar=("H", "A", "S", "B"),
                  help="hidden size, heads, sequence length and batch of the "
                  "CPU cross-check")
  args = parse_args(ap, argv, smoke=dict(sizes=["tiny"], check=[128, 2, 64, 4]))
  print(f"machine: {machine()}")
  h, a, s, b = args.check
  tf_keras.mixed_precision.set_global_policy("mixed_bfloat16")
  try:
    got, want = measured_layer_bytes(h, a, s, b)
  finally:
    tf_keras.mixed_precision.set_global_policy("float32")
  print(f"cross-check (h={h}, a={a}, s={s}, b={b}, bf16, CPU): a layer adds "
        f"{got / 1e6:.1f} MB to the step's peak, formula {want / 1e6:.1f} MB "
        f"(ratio {got / want:.2f})")
  ratio = got / want
  rows = []
  for size in args.sizes:
    params = params_of(size)
    enc = params.task.model.encoder.bert_v2
    h, layers, a, v = (enc.hidden_size, enc.num_layers,
                       enc.num_attention_heads, enc.vocab_size)
    total, embeddings = parameter_counts(params)
    states = total * 18
    flops = (6 * (total - embeddings) * SEQ + 12 * layers * h * SEQ ** 2 +
             6 * 2 * PRED * h * v)
    print(f"{size}: {total / 1e6:.1f} M parameters ({embeddings / 1e6:.1f} M "
          f"embeddings); weights+grads+Adam+bf16 copies {states / GB:.2f} GB; "
          f"{flops / 1e12:.3f} TFLOP per sequence (train step)")
    per_seq = (layers * layer_activation_bytes(SEQ, h, a) +
               head_activation_bytes(h, v))
    layer_bytes = layers * layer_activation_bytes(SEQ, h, a)
    rows.append(dict(size=size, parameters=total, embeddings=embeddings,
                     state_bytes=states, train_flops_per_sequence=flops))
    for batch in (32, 64):
      act = batch * per_seq
      print(f"  batch {batch}: activations {act / GB:.1f} GB "
            f"(layers {batch * layer_bytes / GB:.1f}, embeddings+heads "
            f"{batch * head_activation_bytes(h, v) / GB:.2f}) + states "
            f"{states / GB:.1f} GB = {(act + states) / GB:.1f} GB per "
            f"replica; with layers at the CPU ratio {ratio:.2f}: "
            f"{(act + (ratio - 1) * batch * layer_bytes + states) / GB:.1f} "
            "GB")
    loader = LOADER_TOKENS_PER_CPU_S / SEQ
    for name, peak in ACCELERATORS.items():
      rate = peak * 1e12 * MFU / flops
      print(f"  {name} at {MFU:.0%} MFU: {rate:,.0f} sequences/s; the loader "
            f"makes {loader:,.0f} per CPU core: {rate / loader:.2f} cores")
  report_rows(rows, positive=["parameters", "state_bytes",
                             "train_flops_per_sequence"],
              measured_layer_bytes=got, formula_layer_bytes=want)


if __name__ == "__main__":
  main()
