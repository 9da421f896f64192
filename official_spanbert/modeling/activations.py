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

"""The exact (erf) GeLU as a registered Keras activation.

Model Garden's "gelu" is the tanh approximation; configs name the exact form
`spanbert>gelu_exact` (EXACT_GELU), registered by importing this module.
"""

import tensorflow as tf
import tf_keras

EXACT_GELU = "spanbert>gelu_exact"


@tf_keras.utils.register_keras_serializable(package="spanbert",
                                            name="gelu_exact")
def gelu_exact(x):
  """GELU in its exact (erf) form, as PyTorch's and Hugging Face's "gelu"."""
  return tf.nn.gelu(x, approximate=False)
