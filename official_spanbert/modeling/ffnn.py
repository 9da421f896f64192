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

"""Lee et al.'s feed-forward scorer: ReLU layers with dropout, then a
linear output (coreference's mention and antecedent scores, span NER's span
labels)."""

from typing import Callable, List

import tf_keras


class FFNN(tf_keras.layers.Layer):
  """`depth` ReLU layers of `size` with dropout, then a linear output of
  `output_size` (`initializer` makes a fresh kernel initializer; the output
  bias starts at `output_bias_initializer`).

  Example:
    scorer = FFNN(150, 2, 1, 0.3, tf_keras.initializers.GlorotUniform)
    scores = scorer(g, training=True)  # [..., 1]
  """

  def __init__(self, size: int, depth: int, output_size: int,
               dropout_rate: float, initializer: Callable,
               output_bias_initializer="zeros", **kwargs):
    super().__init__(**kwargs)
    self._hidden = [tf_keras.layers.Dense(size, activation="relu",
                                          kernel_initializer=initializer(),
                                          name=f"hidden_{i}")
                    for i in range(depth)]
    self._dropout = tf_keras.layers.Dropout(dropout_rate)
    self._out = tf_keras.layers.Dense(
        output_size, kernel_initializer=initializer(),
        bias_initializer=output_bias_initializer, name="output")

  @property
  def hidden_layers(self) -> List[tf_keras.layers.Dense]:
    return list(self._hidden)

  def call(self, x, training=None):
    for layer in self._hidden:
      x = self._dropout(layer(x), training=training)
    return self._out(x)
